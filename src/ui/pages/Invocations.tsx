/**
 * Every invocation in a table: filters (kept in the URL, so a filtered view is a link),
 * paging, sorting by creation time, live updates, and actions on a selection.
 */
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { invocationAction, type InvocationAction } from '../api/admin';
import { listInvocations, type InvocationFilter } from '../api/invocations';
import { SHOWN_ORDER } from '../api/outcome';
import { ConfirmButton } from '../components/Confirm';
import { ErrorBox } from '../components/ErrorBox';
import { Ago, Elapsed } from '../components/Ago';
import { StatusBadge } from '../components/StatusBadge';
import { formatTime, toMs } from '../format';
import { useLoad } from '../hooks/use-load';

const PAGE_SIZE = 25;
const STATUS_OPTIONS = ['', 'in-flight', ...SHOWN_ORDER, 'completed'];
const BATCH: Array<[InvocationAction, string, boolean]> = [
  ['cancel', 'Cancel', true],
  ['kill', 'Kill', true],
  ['pause', 'Pause', false],
  ['resume', 'Resume', false],
  ['purge', 'Purge', true],
];

/** `datetime-local` value ⇄ epoch ms. */
const localInput = (ms: number | undefined) =>
  ms === undefined ? '' : new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

function filterOf(q: Record<string, string>): InvocationFilter {
  const f: InvocationFilter = {};
  for (const k of ['status', 'service', 'handler', 'key', 'id'] as const) if (q[k]) f[k] = q[k];
  if (q.from) f.from = Number(q.from);
  if (q.to) f.to = Number(q.to);
  return f;
}

export function Invocations() {
  const { query: q, route, path } = useLocation();
  const filter = filterOf(q);
  const sort = q.sort === 'asc' ? 'asc' : 'desc';
  const page = Math.max(0, Number(q.page ?? 0) || 0);
  const [live, setLive] = useState(true);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [outcome, setOutcome] = useState<string>();

  const key = JSON.stringify([filter, sort, page]);
  const list = useLoad(() => listInvocations(filter, sort, PAGE_SIZE, page * PAGE_SIZE), [key], {
    live,
    staleOn: (c) => c.invocations.some((i) => i.status !== undefined) || c.deleted.length > 0,
  });

  const setQuery = (changes: Record<string, string | undefined>) => {
    const next = { ...q, ...changes };
    const params = new URLSearchParams(
      Object.entries(next).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
    );
    const s = params.toString();
    route(`${path}${s ? `?${s}` : ''}`, true);
  };

  const rows = list.data?.rows ?? [];
  const total = list.data?.total ?? 0;
  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };
  const runBatch = async (action: InvocationAction) => {
    const ids = [...selected];
    const results = await Promise.allSettled(ids.map((id) => invocationAction(id, action)));
    const failed = results.flatMap((r, i) =>
      r.status === 'rejected' ? [`${ids[i]}: ${(r.reason as Error).message}`] : [],
    );
    setOutcome(
      `${action}: ${ids.length - failed.length} of ${ids.length} done${failed.length ? `\n${failed.join('\n')}` : ''}`,
    );
    setSelected(new Set());
    list.reload();
  };

  return (
    <div class="stack">
      <div class="page-head">
        <h1>Invocations</h1>
        <span class="sub">{list.data ? `${total} matching` : 'loading…'}</span>
        <span class="spacer" />
        <label class="check">
          <input type="checkbox" checked={live} onChange={() => setLive(!live)} /> live
        </label>
      </div>
      <div class="card">
        <form class="form-grid" onSubmit={(e) => e.preventDefault()}>
          <label class="field">
            Status
            <select
              name="status"
              value={filter.status ?? ''}
              onChange={(e) => setQuery({ status: e.currentTarget.value, page: undefined })}
            >
              {STATUS_OPTIONS.map((s) => (
                <option key={s} value={s}>
                  {s || 'any'}
                </option>
              ))}
            </select>
          </label>
          {(['service', 'handler', 'key', 'id'] as const).map((k) => (
            <label class="field" key={k}>
              {k === 'id' ? 'Invocation id' : k[0]!.toUpperCase() + k.slice(1)}
              <input
                name={k}
                value={filter[k] ?? ''}
                placeholder="any"
                onChange={(e) => setQuery({ [k]: e.currentTarget.value.trim(), page: undefined })}
              />
            </label>
          ))}
          {(
            [
              ['from', 'Created from'],
              ['to', 'Created until'],
            ] as const
          ).map(([k, label]) => (
            <label class="field" key={k}>
              {label}
              <input
                type="datetime-local"
                value={localInput(filter[k])}
                onChange={(e) =>
                  setQuery({
                    [k]: e.currentTarget.value ? String(Date.parse(e.currentTarget.value)) : undefined,
                    page: undefined,
                  })
                }
              />
            </label>
          ))}
        </form>
      </div>
      <ErrorBox error={list.error} />
      {outcome && <pre class="notice">{outcome}</pre>}
      <div class="card">
        <div class="row" style={{ marginBottom: '10px' }}>
          <span class="muted">{selected.size} selected</span>
          {BATCH.map(([action, label, danger]) => (
            <ConfirmButton
              key={action}
              label={label}
              danger={danger}
              disabled={selected.size === 0}
              title={`${label} ${selected.size} invocation${selected.size === 1 ? '' : 's'}?`}
              message={
                <p>
                  This sends <code>{action}</code> to each selected invocation through the admin API.
                </p>
              }
              confirmLabel={label}
              onConfirm={() => runBatch(action)}
            />
          ))}
        </div>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>
                  <input
                    type="checkbox"
                    aria-label="select all"
                    checked={rows.length > 0 && rows.every((r) => selected.has(r.id))}
                    onChange={(e) => setSelected(e.currentTarget.checked ? new Set(rows.map((r) => r.id)) : new Set())}
                  />
                </th>
                <th>Invocation</th>
                <th>Target</th>
                <th>Status</th>
                <th>
                  <button class="sort" onClick={() => setQuery({ sort: sort === 'asc' ? 'desc' : 'asc' })}>
                    Created {sort === 'asc' ? '▲' : '▼'}
                  </button>
                </th>
                <th>Modified</th>
                <th class="num">Duration</th>
                <th class="num">Retries</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id} data-id={r.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`select ${r.id}`}
                      checked={selected.has(r.id)}
                      onChange={() => toggle(r.id)}
                    />
                  </td>
                  <td class="mono">
                    <a href={`/ui/invocations/${r.id}`}>{r.id}</a>
                  </td>
                  <td>
                    {r.target_service_key !== undefined ? (
                      <a
                        href={`/ui/objects/${encodeURIComponent(r.target_service_name)}/${encodeURIComponent(r.target_service_key)}`}
                      >
                        {r.target}
                      </a>
                    ) : (
                      r.target
                    )}
                  </td>
                  <td>
                    <StatusBadge row={r} />
                  </td>
                  <td>{formatTime(r.created_at)}</td>
                  <td class="small">{toMs(r.modified_at) ? <Ago at={r.modified_at} /> : '—'}</td>
                  <td class="num">
                    <Elapsed since={toMs(r.created_at)} until={toMs(r.completed_at)} />
                  </td>
                  <td class="num">{list.data?.retries.get(r.id) ?? r.retry_count ?? 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data && rows.length === 0 && <div class="empty">No invocations match.</div>}
        </div>
        <div class="row" style={{ marginTop: '10px' }}>
          <button disabled={page === 0} onClick={() => setQuery({ page: String(page - 1) })}>
            ← Previous
          </button>
          <span class="muted">
            {total === 0 ? 0 : page * PAGE_SIZE + 1}–{Math.min(total, (page + 1) * PAGE_SIZE)} of {total}
          </span>
          <button disabled={(page + 1) * PAGE_SIZE >= total} onClick={() => setQuery({ page: String(page + 1) })}>
            Next →
          </button>
        </div>
      </div>
    </div>
  );
}
