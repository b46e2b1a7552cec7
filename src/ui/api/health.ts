/**
 * Per-handler health over the last hour, from what the server keeps of each invocation
 * (sys_invocation's created_at / completed_at and outcome): how many completed, how many
 * failed, the end-to-end latency's p50 and p99 (creation to completion, suspensions and
 * retries included), and how many are in flight now. Invocations purged by their retention
 * before the query are not counted.
 */
import { SHOWN_STATUS_SQL } from './outcome';
import { query, sqlString } from './query';

export interface HandlerHealth {
  service: string;
  handler: string;
  completed: number;
  failed: number;
  /** ms */
  p50?: number;
  p99?: number;
  inFlight: number;
}

export const HEALTH_WINDOW_MS = 3_600_000;

const LATENCY_MS = "date_part('epoch', completed_at - created_at) * 1000";

export async function handlerHealth(now: number, service?: string): Promise<HandlerHealth[]> {
  const only = service === undefined ? '' : ` AND target_service_name = ${sqlString(service)}`;
  const [done, open] = await Promise.all([
    query<{ service: string; handler: string; n: number; failed: number; p50?: number; p99?: number }>(
      `SELECT target_service_name AS service, target_handler_name AS handler, COUNT(*) AS n,
         SUM(CASE WHEN ${SHOWN_STATUS_SQL} = 'failed' THEN 1 ELSE 0 END) AS failed,
         quantile_cont(${LATENCY_MS}, 0.5) AS p50, quantile_cont(${LATENCY_MS}, 0.99) AS p99
       FROM sys_invocation WHERE completed_at IS NOT NULL AND date_part('epoch', completed_at) >= ${(now - HEALTH_WINDOW_MS) / 1000}${only}
       GROUP BY service, handler`,
    ),
    query<{ service: string; handler: string; n: number }>(
      `SELECT target_service_name AS service, target_handler_name AS handler, COUNT(*) AS n FROM sys_invocation WHERE status <> 'completed'${only} GROUP BY service, handler`,
    ),
  ]);
  const byKey = new Map<string, HandlerHealth>();
  const entry = (s: string, h: string) => {
    const key = `${s}/${h}`;
    let e = byKey.get(key);
    if (!e) byKey.set(key, (e = { service: s, handler: h, completed: 0, failed: 0, inFlight: 0 }));
    return e;
  };
  for (const r of done) {
    const e = entry(r.service, r.handler);
    e.completed = Number(r.n);
    e.failed = Number(r.failed);
    if (r.p50 !== undefined) e.p50 = Number(r.p50);
    if (r.p99 !== undefined) e.p99 = Number(r.p99);
  }
  for (const r of open) entry(r.service, r.handler).inFlight = Number(r.n);
  return [...byKey.values()].sort(
    (a, b) =>
      b.completed + b.inFlight - (a.completed + a.inFlight) || (a.service + a.handler < b.service + b.handler ? -1 : 1),
  );
}
