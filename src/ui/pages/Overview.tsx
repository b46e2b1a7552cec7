/** The overview: invocations by status (live), the registry's size, completions per minute. */
import { query } from '../api/query';
import { ErrorBox } from '../components/ErrorBox';
import { MinuteChart, type MinuteCount } from '../components/MinuteChart';
import { useLoad } from '../hooks/use-load';
import type { LiveChange } from '../api/live';

const STATUSES: Array<[string, string]> = [
  ['running', 'Running'],
  ['suspended', 'Suspended'],
  ['backing-off', 'Backing off'],
  ['paused', 'Paused'],
  ['pending', 'Pending'],
  ['scheduled', 'Scheduled'],
  ['succeeded', 'Succeeded'],
  ['failed', 'Failed'],
];

const invocationsChanged = (c: LiveChange) => c.invocations.some((i) => i.status !== undefined) || c.deleted.length > 0;

async function statusCounts(): Promise<Map<string, number>> {
  const rows = await query<{ status: string; result?: string; n: number }>(
    'SELECT status, completion_result AS result, COUNT(*) AS n FROM sys_invocation GROUP BY status, completion_result',
  );
  const counts = new Map<string, number>();
  for (const r of rows) {
    const key = r.status === 'completed' ? (r.result === 'success' ? 'succeeded' : 'failed') : r.status;
    counts.set(key, (counts.get(key) ?? 0) + Number(r.n));
  }
  return counts;
}

async function perMinute(now: number): Promise<MinuteCount[]> {
  const rows = await query<{ minute: number; result: string; n: number }>(
    // date_part('epoch', …) (seconds), as both DuckDB and the reference's DataFusion have it.
    `SELECT floor(date_part('epoch', completed_at) / 60) AS minute, completion_result AS result, COUNT(*) AS n
     FROM sys_invocation WHERE completed_at IS NOT NULL AND date_part('epoch', completed_at) >= ${(now - 3_600_000) / 1000}
     GROUP BY minute, result`,
  );
  const byMinute = new Map<number, MinuteCount>();
  for (const r of rows) {
    const minute = Number(r.minute);
    const c = byMinute.get(minute) ?? { minute, ok: 0, failed: 0 };
    if (r.result === 'success') c.ok += Number(r.n);
    else c.failed += Number(r.n);
    byMinute.set(minute, c);
  }
  return [...byMinute.values()];
}

export function Overview() {
  const counts = useLoad(statusCounts, [], { staleOn: invocationsChanged });
  const chart = useLoad(async () => ({ now: Date.now(), counts: await perMinute(Date.now()) }), [], {
    staleOn: (c) => c.invocations.some((i) => i.status === 'completed') || c.deleted.length > 0,
  });
  const registry = useLoad(async () => {
    const [[d], [s]] = await Promise.all([query<{ n: number }>('SELECT COUNT(*) AS n FROM sys_deployment'), query<{ n: number }>('SELECT COUNT(*) AS n FROM sys_service')]);
    return { deployments: Number(d?.n ?? 0), services: Number(s?.n ?? 0) };
  }, []);
  const total = [...(counts.data?.values() ?? [])].reduce((a, b) => a + b, 0);

  return (
    <div class="stack">
      <div class="page-head">
        <h1>Overview</h1>
        <span class="sub">{counts.data ? `${total} invocations kept` : 'loading…'}</span>
      </div>
      <ErrorBox error={counts.error ?? chart.error ?? registry.error} />
      <div class="grid cols-4">
        {STATUSES.map(([status, label]) => (
          <a key={status} class="card stat" href={`/ui/invocations?status=${status}`} data-status={status}>
            <span class={`n s-${status}`}>{counts.data ? counts.data.get(status) ?? 0 : '…'}</span>
            <span class="l">{label}</span>
          </a>
        ))}
      </div>
      <div class="grid cols-2">
        <div class="card">
          <h2>Completed per minute, last hour</h2>
          {chart.data && <MinuteChart counts={chart.data.counts} now={chart.data.now} />}
          <div class="legend">
            <span><i style={{ background: 'var(--ok)' }} />succeeded</span>
            <span><i style={{ background: 'var(--bad)' }} />failed</span>
          </div>
        </div>
        <div class="grid" style={{ gridTemplateRows: 'auto auto', alignContent: 'start' }}>
          <a class="card stat" href="/ui/services">
            <span class="n">{registry.data?.services ?? '…'}</span>
            <span class="l">Services</span>
          </a>
          <a class="card stat" href="/ui/deployments">
            <span class="n">{registry.data?.deployments ?? '…'}</span>
            <span class="l">Deployments</span>
          </a>
          {registry.data?.deployments === 0 && (
            <div class="notice">
              No deployment yet. <a href="/ui/deployments">Register your service's endpoint</a> to get started.
            </div>
          )}
        </div>
      </div>
    </div>
  );
}
