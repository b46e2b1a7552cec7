/**
 * What is waiting on what (api/waiting.ts): every open wait across invocations, with who
 * waits, for what, since when and until when, soonest first; live, filtered by kind in the
 * address (`?kind=timer`).
 */
import { useLocation } from 'preact-iso';
import { loadWaits, type WaitKind } from '../api/waiting';
import { Ago } from '../components/Ago';
import { ErrorBox } from '../components/ErrorBox';
import { useLoad } from '../hooks/use-load';

const KINDS: Array<[WaitKind, string]> = [
  ['timer', 'timers'],
  ['awakeable', 'awakeables'],
  ['promise', 'durable promises'],
  ['call', 'calls'],
  ['attach', 'attached results'],
  ['run', 'ctx.run in progress'],
  ['retry', 'retries'],
  ['start', 'scheduled starts'],
  ['lock', 'key locks'],
  ['slot', 'slots'],
  ['resume', 'paused'],
  ['other', 'other'],
];

export function Waiting() {
  const { query: q, route, path } = useLocation();
  const kind = q.kind ?? '';
  const waits = useLoad(loadWaits, [], {
    staleOn: (c) => c.invocations.length > 0 || c.objects.length > 0 || c.deleted.length > 0,
  });
  const rows = (waits.data ?? []).filter((w) => !kind || w.kind === kind);
  const counts = new Map<string, number>();
  for (const w of waits.data ?? []) counts.set(w.kind, (counts.get(w.kind) ?? 0) + 1);
  return (
    <div class="stack">
      <div class="page-head">
        <h1>Waiting</h1>
        <span class="sub">{waits.data ? `${waits.data.length} open waits` : 'loading…'}</span>
      </div>
      <ErrorBox error={waits.error} />
      <div class="card">
        <div class="row chips" role="tablist" aria-label="kinds">
          <a href={path} class={kind === '' ? 'on' : ''}>
            all {waits.data?.length ?? ''}
          </a>
          {KINDS.filter(([k]) => counts.has(k) || k === kind).map(([k, label]) => (
            <a
              key={k}
              href={`${path}?kind=${k}`}
              class={kind === k ? 'on' : ''}
              onClick={(e) => (e.preventDefault(), route(`${path}?kind=${k}`, true))}
            >
              {label} {counts.get(k) ?? 0}
            </a>
          ))}
        </div>
        <div class="table-wrap">
          <table id="waits">
            <thead>
              <tr>
                <th>Invocation</th>
                <th>Waits for</th>
                <th>Since</th>
                <th>Until</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((w, i) => (
                <tr key={`${w.id}-${i}`} data-id={w.id} data-kind={w.kind}>
                  <td>
                    <a class="mono small" href={`/ui/invocations/${w.id}`}>
                      {w.id}
                    </a>
                    <div class="small">
                      {w.target} <span class={`badge s-${w.status}`}>{w.status}</span>
                    </div>
                  </td>
                  <td>
                    <span class="badge">{w.kind}</span> {w.what}{' '}
                    {w.link && (
                      <a class="mono small" href={w.link.href}>
                        {w.link.text}
                      </a>
                    )}
                  </td>
                  <td class="small">{w.since !== undefined ? <Ago at={w.since} /> : '—'}</td>
                  <td class="small">
                    {w.until !== undefined ? <Ago at={w.until} /> : <span class="muted">until it happens</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {waits.data && rows.length === 0 && <div class="empty">Nothing is waiting.</div>}
        </div>
      </div>
    </div>
  );
}
