/**
 * Across the keys of one virtual object or workflow: each key's lock, inbox, state and
 * invocations; each workflow run; every key's state side by side. From /query.
 */
import { SHOWN_STATUS_SQL, type Shown } from './outcome';
import { query, sqlString } from './query';

export interface KeySummary {
  key: string;
  invocations: number;
  inFlight: number;
  lastCreated?: string;
  holder?: string;
  inbox: number;
  stateEntries: number;
}

export interface WorkflowRun {
  key: string;
  id: string;
  shown: Shown;
  created_at: string;
  completed_at?: string;
  promises: number;
  promisesDone: number;
}

const ofService = (service: string, column = 'service_name') => `${column} = ${sqlString(service)}`;

export async function objectKeys(service: string): Promise<KeySummary[]> {
  const [invocations, state, holders, inbox] = await Promise.all([
    // Grouped by the column, not the alias: `key` is also a column of state and sys_promise.
    query<{ key: string; n: number; open: number; last: string }>(
      `SELECT target_service_key AS key, COUNT(*) AS n, SUM(CASE WHEN status <> 'completed' THEN 1 ELSE 0 END) AS open, MAX(created_at) AS last
       FROM sys_invocation WHERE ${ofService(service, 'target_service_name')} AND target_service_key IS NOT NULL GROUP BY target_service_key`,
    ),
    query<{ key: string; n: number }>(
      `SELECT service_key AS key, COUNT(*) AS n FROM state WHERE ${ofService(service)} GROUP BY service_key`,
    ),
    query<{ key: string; invocation_id: string }>(
      `SELECT service_key AS key, invocation_id FROM sys_keyed_service_status WHERE ${ofService(service)}`,
    ),
    query<{ key: string; n: number }>(
      `SELECT service_key AS key, COUNT(*) AS n FROM sys_inbox WHERE ${ofService(service)} GROUP BY service_key`,
    ),
  ]);
  const keys = new Map<string, KeySummary>();
  const of = (key: string) => {
    let k = keys.get(key);
    if (!k) keys.set(key, (k = { key, invocations: 0, inFlight: 0, inbox: 0, stateEntries: 0 }));
    return k;
  };
  for (const r of invocations)
    Object.assign(of(r.key), { invocations: Number(r.n), inFlight: Number(r.open), lastCreated: r.last });
  for (const r of state) of(r.key).stateEntries = Number(r.n);
  for (const r of holders) of(r.key).holder = r.invocation_id;
  for (const r of inbox) of(r.key).inbox = Number(r.n);
  return [...keys.values()].sort(
    (a, b) => (b.lastCreated ?? '').localeCompare(a.lastCreated ?? '') || a.key.localeCompare(b.key),
  );
}

export async function workflowRuns(service: string, runHandler: string): Promise<WorkflowRun[]> {
  const [runs, promises] = await Promise.all([
    query<{ key: string; id: string; shown: Shown; created_at: string; completed_at?: string }>(
      `SELECT target_service_key AS key, id, ${SHOWN_STATUS_SQL} AS shown, created_at, completed_at FROM sys_invocation
       WHERE ${ofService(service, 'target_service_name')} AND target_handler_name = ${sqlString(runHandler)} ORDER BY created_at DESC`,
    ),
    query<{ key: string; n: number; done: number }>(
      `SELECT service_key AS key, COUNT(*) AS n, SUM(CASE WHEN completed THEN 1 ELSE 0 END) AS done FROM sys_promise WHERE ${ofService(service)} GROUP BY service_key`,
    ),
  ]);
  const byKey = new Map(promises.map((p) => [p.key, p]));
  return runs.map((r) => ({
    ...r,
    promises: Number(byKey.get(r.key)?.n ?? 0),
    promisesDone: Number(byKey.get(r.key)?.done ?? 0),
  }));
}

export interface StateCell {
  text?: string;
  length: number;
}

/** Every key's state as a table: one row per key, one column per state name. */
export async function stateAcrossKeys(
  service: string,
  keyContains: string,
  limit: number,
): Promise<{ names: string[]; rows: Array<{ key: string; cells: Map<string, StateCell> }>; truncated: boolean }> {
  const filter = keyContains ? ` AND contains(service_key, ${sqlString(keyContains)})` : '';
  const entries = await query<{ service_key: string; key: string; value_utf8?: string; value_length: number }>(
    `SELECT service_key, key, value_utf8, value_length FROM state WHERE ${ofService(service)}${filter} ORDER BY service_key, key LIMIT ${limit + 1}`,
  );
  const truncated = entries.length > limit;
  const rows = new Map<string, Map<string, StateCell>>();
  const names = new Set<string>();
  for (const e of entries.slice(0, limit)) {
    names.add(e.key);
    let cells = rows.get(e.service_key);
    if (!cells) rows.set(e.service_key, (cells = new Map()));
    cells.set(e.key, { ...(e.value_utf8 !== undefined ? { text: e.value_utf8 } : {}), length: Number(e.value_length) });
  }
  return { names: [...names].sort(), rows: [...rows].map(([key, cells]) => ({ key, cells })), truncated };
}
