/**
 * How an invocation is shown: its status, and for a completed one how it ended. A kill or a
 * cancellation is an operator's decision, not a failure of the handler, so it is shown (and
 * counted) apart, as Restate's UI does: `[409] killed` is what a kill completes with,
 * `[409] canceled` a cancel of what had not started or was paused, and `[409] Cancelled` what
 * the SDK ends a cancelled handler with.
 */
export type Shown =
  | 'pending'
  | 'scheduled'
  | 'running'
  | 'suspended'
  | 'backing-off'
  | 'paused'
  | 'succeeded'
  | 'failed'
  | 'killed'
  | 'cancelled';

export interface StatusFields {
  status: string;
  completion_result?: string | undefined;
  completion_failure?: string | undefined;
}

const KILLED = ['[409] killed'];
const CANCELLED = ['[409] canceled', '[409] cancelled'];

export function shownStatus(r: StatusFields): Shown {
  if (r.status !== 'completed') return r.status as Shown;
  if (r.completion_result === 'success') return 'succeeded';
  const failure = (r.completion_failure ?? '').toLowerCase();
  if (KILLED.includes(failure)) return 'killed';
  if (CANCELLED.includes(failure)) return 'cancelled';
  return 'failed';
}

const sqlIn = (values: string[]) => `lower(completion_failure) IN (${values.map((v) => `'${v}'`).join(', ')})`;

/** The same as a SQL expression over sys_invocation's columns. */
export const SHOWN_STATUS_SQL = `CASE WHEN status <> 'completed' THEN status WHEN completion_result = 'success' THEN 'succeeded' WHEN ${sqlIn(KILLED)} THEN 'killed' WHEN ${sqlIn(CANCELLED)} THEN 'cancelled' ELSE 'failed' END`;

/** A WHERE condition for one shown status, or `completed` (the last four) or `in-flight` (the others). */
export function shownStatusWhere(shown: string): string {
  switch (shown) {
    case 'in-flight':
      return "status <> 'completed'";
    case 'succeeded':
      return "status = 'completed' AND completion_result = 'success'";
    case 'failed':
      return `status = 'completed' AND completion_result = 'failure' AND NOT ${sqlIn([...KILLED, ...CANCELLED])}`;
    case 'killed':
      return `status = 'completed' AND ${sqlIn(KILLED)}`;
    case 'cancelled':
      return `status = 'completed' AND ${sqlIn(CANCELLED)}`;
    default:
      return `status = '${shown.replace(/'/g, "''")}'`;
  }
}

/** Statuses in the order the pages list them. */
export const SHOWN_ORDER: Shown[] = [
  'running',
  'suspended',
  'backing-off',
  'paused',
  'pending',
  'scheduled',
  'succeeded',
  'failed',
  'killed',
  'cancelled',
];
