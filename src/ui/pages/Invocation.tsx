/**
 * One invocation: the path it took (in words, the whole machine one click away), its journal
 * on a timeline, how it failed (every attempt), the request tree it belongs to, its key's
 * state, its details, and the operator's actions (with retry now and the JSON export).
 * The views are links: `?machine=full`, `?journal=compact`.
 */
import { useLocation } from 'preact-iso';
import { getInvocation, type InvocationRow } from '../api/invocations';
import type { LiveChange } from '../api/live';
import { shownStatus } from '../api/outcome';
import { query, sqlString } from '../api/query';
import { Ago } from '../components/Ago';
import { ErrorBox } from '../components/ErrorBox';
import { StatusBadge } from '../components/StatusBadge';
import { formatTime } from '../format';
import { useLoad } from '../hooks/use-load';
import { Actions } from '../invocation/Actions';
import { downloadExport, invocationExport } from '../invocation/export';
import { Failures } from '../invocation/Failures';
import { loadJournal } from '../api/journal';
import { PathView } from '../invocation/PathView';
import { RequestTree } from '../invocation/RequestTree';
import { Timeline } from '../invocation/Timeline';
import { useHistory } from '../invocation/use-history';

const objectHref = (service: string, key: string) =>
  `/ui/objects/${encodeURIComponent(service)}/${encodeURIComponent(key)}`;

function Details({ inv, retries }: { inv: InvocationRow; retries: number | undefined }) {
  const rows: Array<[string, preact.ComponentChildren]> = [
    ['Target', inv.target],
    ['Service type', inv.target_service_ty],
    [
      'Created',
      <>
        {formatTime(inv.created_at)} (<Ago at={inv.created_at} />)
      </>,
    ],
    [
      'Modified',
      <>
        {formatTime(inv.modified_at)} (<Ago at={inv.modified_at} />)
      </>,
    ],
    ['Retries', retries ?? inv.retry_count ?? '—'],
    ['Journal entries', inv.journal_size ?? 0],
    [
      'Invoked by',
      inv.invoked_by_id ? (
        <a class="mono" href={`/ui/invocations/${inv.invoked_by_id}`}>
          {inv.invoked_by_target ?? inv.invoked_by_id}
        </a>
      ) : (
        inv.invoked_by
      ),
    ],
    ['Idempotency key', inv.idempotency_key ?? '—'],
    ['Deployment', inv.pinned_deployment_id ? <a href="/ui/deployments">{inv.pinned_deployment_id}</a> : '—'],
  ];
  if (inv.restarted_from)
    rows.push([
      'Restarted from',
      <a class="mono" href={`/ui/invocations/${inv.restarted_from}`}>
        {inv.restarted_from}
      </a>,
    ]);
  if (inv.target_service_key !== undefined) {
    rows.push([
      inv.target_service_ty === 'workflow' ? 'Workflow id' : 'Object key',
      <a href={objectHref(inv.target_service_name, inv.target_service_key)}>
        {inv.target_service_name}/{inv.target_service_key}
      </a>,
    ]);
  }
  if (inv.scheduled_start_at)
    rows.push([
      'Scheduled start',
      <>
        {formatTime(inv.scheduled_start_at)} (<Ago at={inv.scheduled_start_at} />)
      </>,
    ]);
  if (inv.next_retry_at)
    rows.push([
      'Next retry',
      <>
        {formatTime(inv.next_retry_at)} (<Ago at={inv.next_retry_at} />)
      </>,
    ]);
  return (
    <div class="card" id="details">
      <h2>Details</h2>
      <dl class="kv">{rows.map(([k, v]) => [<dt key={`${k}t`}>{k}</dt>, <dd key={`${k}d`}>{v}</dd>])}</dl>
    </div>
  );
}

/** The state of the invocation's object / workflow key as it is now (not as the attempt saw it). */
function KeyState({ inv }: { inv: InvocationRow }) {
  const service = inv.target_service_name;
  const key = inv.target_service_key!;
  const state = useLoad(
    () =>
      query<{ key: string; value_utf8?: string }>(
        `SELECT key, value_utf8 FROM state WHERE service_name = ${sqlString(service)} AND service_key = ${sqlString(key)} ORDER BY key`,
      ),
    [service, key],
    { staleOn: (c) => c.state.some((s) => s.service === service && s.key === key) },
  );
  return (
    <div class="card">
      <h2>
        State of{' '}
        <a href={objectHref(service, key)}>
          {service}/{key}
        </a>{' '}
        <span class="muted small">now</span>
      </h2>
      {state.data?.length === 0 && <div class="muted">empty</div>}
      <dl class="kv">
        {(state.data ?? []).map((s) => [
          <dt key={`${s.key}t`} class="mono">
            {s.key}
          </dt>,
          <dd key={`${s.key}d`} class="mono">
            {s.value_utf8 ?? '(binary)'}
          </dd>,
        ])}
      </dl>
    </div>
  );
}

/** The page's address with one query parameter set (or removed). */
function withParam(path: string, q: Record<string, string>, name: string, value: string | undefined): string {
  const next = new URLSearchParams(
    Object.entries({ ...q, [name]: value }).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const s = next.toString();
  return s ? `${path}?${s}` : path;
}

export function Invocation({ id }: { id: string }) {
  const { path, query: q } = useLocation();
  const mine = (c: LiveChange) => c.invocations.some((i) => i.id === id) || c.deleted.includes(id);
  const inv = useLoad(() => getInvocation(id), [id], { staleOn: mine });
  const journal = useLoad(() => loadJournal(id), [id], { staleOn: mine });
  const { history, error } = useHistory(id);
  const row = inv.data;
  const full = q.machine === 'full';
  const detailed = q.journal !== 'compact';

  if (inv.data === undefined && !inv.loading && !inv.error) {
    return (
      <div class="stack">
        <h1>Invocation not found</h1>
        <p class="muted mono">{id}</p>
        <p>
          It may have been purged after its retention. <a href="/ui/invocations">All invocations</a>
        </p>
      </div>
    );
  }
  const shown = row ? shownStatus(row) : undefined;
  return (
    <div class="stack">
      <div class="page-head">
        <div>
          <div class="row">
            <h1 class="mono">{id}</h1>
            {row && <StatusBadge row={row} />}
          </div>
          {row && <div class="sub muted">{row.target}</div>}
        </div>
        <span class="spacer" />
        {row && (
          <Actions id={id} status={row.status} onDone={inv.reload}>
            <button
              disabled={!journal.data || !history}
              onClick={() => downloadExport(invocationExport(row, journal.data ?? [], history ?? []))}
            >
              Export JSON
            </button>
          </Actions>
        )}
      </div>
      <ErrorBox error={inv.error ?? error ?? journal.error} />
      {history && (
        <PathView
          history={history}
          shown={shown}
          full={full}
          toggleHref={withParam(path, q, 'machine', full ? undefined : 'full')}
        />
      )}
      <div class="grid detail">
        <div class="card" id="journal">
          <div class="row" style={{ justifyContent: 'space-between', marginBottom: '8px' }}>
            <h2 style={{ margin: 0 }}>Journal</h2>
            <div class="tabs" role="tablist">
              <a role="tab" class={detailed ? 'on' : ''} href={withParam(path, q, 'journal', undefined)}>
                Detailed
              </a>
              <a role="tab" class={detailed ? '' : 'on'} href={withParam(path, q, 'journal', 'compact')}>
                Compact
              </a>
            </div>
          </div>
          {journal.data && row && history && shown && (
            <Timeline items={journal.data} history={history} inv={row} shown={shown} detailed={detailed} />
          )}
        </div>
        <div class="stack">
          {row && history && shown && <Failures inv={row} shown={shown} history={history} />}
          <RequestTree id={id} />
          {row?.target_service_key !== undefined && row.target_service_ty !== 'service' && <KeyState inv={row} />}
          {row && <Details inv={row} retries={history ? Math.max(0, ...history.map((h) => h.attempt)) : undefined} />}
        </div>
      </div>
    </div>
  );
}
