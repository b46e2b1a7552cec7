/**
 * The overview: invocations by status (live), completions per minute, each handler's health
 * over the last hour, and the registry's size.
 */
import { handlerHealth } from '../api/health';
import type { LiveChange } from '../api/live';
import { SHOWN_STATUS_SQL, type Shown } from '../api/outcome';
import { query } from '../api/query';
import { ErrorBox } from '../components/ErrorBox';
import { HealthTable } from '../components/HealthTable';
import { MinuteChart, type MinuteCount } from '../components/MinuteChart';
import { useLoad } from '../hooks/use-load';

const STATUSES: Array<[Shown, string]> = [
  ['running', 'Running'],
  ['suspended', 'Suspended'],
  ['backing-off', 'Backing off'],
  ['paused', 'Paused'],
  ['pending', 'Pending'],
  ['scheduled', 'Scheduled'],
  ['succeeded', 'Succeeded'],
  ['failed', 'Failed'],
  ['killed', 'Killed'],
  ['cancelled', 'Cancelled'],
];

const invocationsChanged = (c: LiveChange) => c.invocations.some((i) => i.status !== undefined) || c.deleted.length > 0;
const completions = (c: LiveChange) => c.invocations.some((i) => i.status === 'completed') || c.deleted.length > 0;

async function statusCounts(): Promise<Map<string, number>> {
  const rows = await query<{ shown: string; n: number }>(
    `SELECT ${SHOWN_STATUS_SQL} AS shown, COUNT(*) AS n FROM sys_invocation GROUP BY shown`,
  );
  return new Map(rows.map((r) => [r.shown, Number(r.n)]));
}

async function perMinute(now: number): Promise<MinuteCount[]> {
  const rows = await query<{ minute: number; shown: string; n: number }>(
    // date_part('epoch', …) (seconds), as both DuckDB and the reference's DataFusion have it.
    `SELECT floor(date_part('epoch', completed_at) / 60) AS minute, ${SHOWN_STATUS_SQL} AS shown, COUNT(*) AS n
     FROM sys_invocation WHERE completed_at IS NOT NULL AND date_part('epoch', completed_at) >= ${(now - 3_600_000) / 1000}
     GROUP BY minute, shown`,
  );
  const byMinute = new Map<number, MinuteCount>();
  for (const r of rows) {
    const minute = Number(r.minute);
    const c = byMinute.get(minute) ?? { minute, ok: 0, failed: 0, stopped: 0 };
    if (r.shown === 'succeeded') c.ok += Number(r.n);
    else if (r.shown === 'failed') c.failed += Number(r.n);
    else c.stopped += Number(r.n);
    byMinute.set(minute, c);
  }
  return [...byMinute.values()];
}

export function Overview() {
  const counts = useLoad(statusCounts, [], { staleOn: invocationsChanged });
  const chart = useLoad(async () => ({ now: Date.now(), counts: await perMinute(Date.now()) }), [], {
    staleOn: completions,
  });
  const health = useLoad(() => handlerHealth(Date.now()), [], { staleOn: invocationsChanged });
  const registry = useLoad(async () => {
    const [[d], [s]] = await Promise.all([
      query<{ n: number }>('SELECT COUNT(*) AS n FROM sys_deployment'),
      query<{ n: number }>('SELECT COUNT(*) AS n FROM sys_service'),
    ]);
    return { deployments: Number(d?.n ?? 0), services: Number(s?.n ?? 0) };
  }, []);
  const total = [...(counts.data?.values() ?? [])].reduce((a, b) => a + b, 0);

  return (
    <div class="stack">
      <div class="page-head">
        <h1>Overview</h1>
        <span class="sub">{counts.data ? `${total} invocations kept` : 'loading…'}</span>
        <span class="spacer" />
        <a class="btn" href="/ui/services">
          {registry.data?.services ?? '…'} services
        </a>
        <a class="btn" href="/ui/deployments">
          {registry.data?.deployments ?? '…'} deployments
        </a>
      </div>
      <ErrorBox error={counts.error ?? chart.error ?? registry.error ?? health.error} />
      {registry.data?.deployments === 0 && (
        <div class="notice">
          No deployment yet. <a href="/ui/deployments">Register your service's endpoint</a> to get started.
        </div>
      )}
      <div class="grid cols-5">
        {STATUSES.map(([status, label]) => (
          <a key={status} class="card stat" href={`/ui/invocations?status=${status}`} data-status={status}>
            <span class={`n s-${status}`}>{counts.data ? (counts.data.get(status) ?? 0) : '…'}</span>
            <span class="l">{label}</span>
          </a>
        ))}
      </div>
      <div class="grid overview-lower">
        <div class="card">
          <h2>Completed per minute, last hour</h2>
          {chart.data && <MinuteChart counts={chart.data.counts} now={chart.data.now} />}
          <div class="legend">
            <span>
              <i style={{ background: 'var(--ok)' }} />
              succeeded
            </span>
            <span>
              <i style={{ background: 'var(--bad)' }} />
              failed
            </span>
            <span>
              <i style={{ background: 'var(--muted)' }} />
              killed or cancelled
            </span>
          </div>
        </div>
        <div class="card" id="health">
          <h2>Handlers, last hour</h2>
          {health.data && <HealthTable rows={health.data} showService />}
        </div>
      </div>
    </div>
  );
}
