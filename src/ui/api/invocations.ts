/** The invocation rows the pages list and show, from sys_invocation. */
import { shownStatusWhere } from './outcome';
import { query, sqlList, sqlString, type Row } from './query';

export interface InvocationRow extends Row {
  id: string;
  target: string;
  target_service_name: string;
  target_service_key?: string;
  target_handler_name: string;
  target_service_ty: string;
  status: string;
  completion_result?: string;
  completion_failure?: string;
  created_at: string;
  modified_at?: string;
  running_at?: string;
  completed_at?: string;
  retry_count?: number;
  invoked_by: string;
  invoked_by_id?: string;
  invoked_by_target?: string;
  idempotency_key?: string;
  restarted_from?: string;
  pinned_deployment_id?: string;
  scheduled_start_at?: string;
  next_retry_at?: string;
  journal_size?: number;
  last_failure?: string;
}

export interface InvocationFilter {
  status?: string;
  service?: string;
  handler?: string;
  key?: string;
  id?: string;
  /** Epoch ms bounds of created_at. */
  from?: number;
  to?: number;
}

const LIST_COLUMNS =
  'id, target, target_service_name, target_service_key, target_handler_name, target_service_ty, status, completion_result, completion_failure, created_at, modified_at, completed_at, retry_count, invoked_by, invoked_by_id';

export function whereOf(f: InvocationFilter): string {
  const clauses: string[] = [];
  if (f.status) clauses.push(shownStatusWhere(f.status));
  if (f.service) clauses.push(`target_service_name = ${sqlString(f.service)}`);
  if (f.handler) clauses.push(`target_handler_name = ${sqlString(f.handler)}`);
  if (f.key) clauses.push(`target_service_key = ${sqlString(f.key)}`);
  if (f.id) clauses.push(`id = ${sqlString(f.id)}`);
  if (f.from !== undefined) clauses.push(`date_part('epoch', created_at) >= ${Math.floor(f.from) / 1000}`);
  if (f.to !== undefined) clauses.push(`date_part('epoch', created_at) <= ${Math.floor(f.to) / 1000}`);
  return clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
}

/**
 * Failed attempts of each invocation, from its history: sys_invocation has `retry_count` only
 * while the invoker holds an invocation (as Restate's), not once it suspended or completed.
 */
export async function retriesOf(ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await query<{ id: string; n: number }>(
    `SELECT id, MAX(attempt) AS n FROM sys_invocation_transitions WHERE id IN ${sqlList(ids)} GROUP BY id`,
  );
  return new Map(rows.map((r) => [r.id, Number(r.n)]));
}

export async function listInvocations(
  f: InvocationFilter,
  sort: 'asc' | 'desc',
  limit: number,
  offset: number,
): Promise<{ rows: InvocationRow[]; total: number; retries: Map<string, number> }> {
  const where = whereOf(f);
  const [rows, count] = await Promise.all([
    query<InvocationRow>(
      `SELECT ${LIST_COLUMNS} FROM sys_invocation ${where} ORDER BY created_at ${sort === 'asc' ? 'ASC' : 'DESC'}, id LIMIT ${limit} OFFSET ${offset}`,
    ),
    query<{ n: number }>(`SELECT COUNT(*) AS n FROM sys_invocation ${where}`),
  ]);
  return { rows, total: Number(count[0]?.n ?? 0), retries: await retriesOf(rows.map((r) => r.id)) };
}

export async function getInvocation(id: string): Promise<InvocationRow | undefined> {
  return (await query<InvocationRow>(`SELECT * FROM sys_invocation WHERE id = ${sqlString(id)}`))[0];
}
