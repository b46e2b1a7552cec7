/** Finding invocations (SQL over sys_invocation) and reading one whole (invocation-view.ts). */
import * as z from 'zod';
import { invocationParam } from '../../admin/routes/invocations.js';
import { InvalidRequest } from '../../errors.js';
import { DurationParseError, parseDuration } from '../../registry/durations.js';
import type { McpDeps } from '../deps.js';
import { describeInvocation } from '../invocation-view.js';
import { sqlRows, sqlString, type Rows } from '../sql.js';
import { answer, READ_ONLY, tool, type Tool } from '../tool.js';

const STATUSES = [
  'pending',
  'scheduled',
  'running',
  'backing-off',
  'suspended',
  'paused',
  'completed',
  'succeeded',
  'failed',
] as const;

const LIST_COLUMNS =
  'id, target, status, completion_result, completion_failure, created_at, modified_at, scheduled_start_at, next_retry_at, retry_count, last_failure, invoked_by, invoked_by_id, idempotency_key';

function ms(text: string, name: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    if (err instanceof DurationParseError) throw new InvalidRequest(`${name}: ${err.message}`);
    throw err;
  }
}

interface ListFilter {
  status?: (typeof STATUSES)[number] | undefined;
  service?: string | undefined;
  handler?: string | undefined;
  key?: string | undefined;
  target?: string | undefined;
  created_within?: string | undefined;
  older_than?: string | undefined;
}

function whereOf(f: ListFilter, now: number): string {
  const clauses: string[] = [];
  if (f.status === 'succeeded') clauses.push("status = 'completed' AND completion_result = 'success'");
  else if (f.status === 'failed') clauses.push("status = 'completed' AND completion_result = 'failure'");
  else if (f.status !== undefined) clauses.push(`status = ${sqlString(f.status)}`);
  const equal = {
    target_service_name: f.service,
    target_handler_name: f.handler,
    target_service_key: f.key,
    target: f.target,
  };
  for (const [column, value] of Object.entries(equal))
    if (value !== undefined) clauses.push(`${column} = ${sqlString(value)}`);
  const epoch = (before: number) => (now - before) / 1000;
  if (f.created_within !== undefined)
    clauses.push(`date_part('epoch', created_at) >= ${epoch(ms(f.created_within, 'created_within'))}`);
  if (f.older_than !== undefined)
    clauses.push(`date_part('epoch', created_at) <= ${epoch(ms(f.older_than, 'older_than'))}`);
  return clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
}

function listSummary(rows: Rows, more: boolean): string {
  if (rows.length === 0) return 'No invocations match.';
  const lines = rows.map(
    (r) =>
      `${String(r['id'])} ${String(r['target'])} ${String(r['status'])}${r['completion_result'] ? ` (${String(r['completion_result'])})` : ''}`,
  );
  return `${rows.length}${more ? '+' : ''} invocations, newest first:\n${lines.join('\n')}`;
}

export function invocationTools(deps: McpDeps): Tool[] {
  return [
    tool('list_invocations', {
      title: 'List invocations',
      description:
        'Invocations, newest first, filtered by status, target and age. `succeeded` and `failed` are completed ones by their result. For anything else, use `query` with SQL over sys_invocation.',
      input: {
        status: z.enum(STATUSES).optional(),
        service: z.string().optional(),
        handler: z.string().optional(),
        key: z.string().optional().describe('The object key or workflow id'),
        target: z.string().optional().describe('Service/handler or Service/key/handler, exactly'),
        created_within: z.string().optional().describe('Created at most this long ago, e.g. 10m, 1h, PT30S'),
        older_than: z.string().optional().describe('Created at least this long ago'),
        limit: z.number().int().min(1).max(1000).default(50),
      },
      annotations: READ_ONLY,
      async run({ limit, ...filter }) {
        const rows = await sqlRows(
          deps,
          `SELECT ${LIST_COLUMNS} FROM sys_invocation ${whereOf(filter, Date.now())} ORDER BY created_at DESC, id LIMIT ${limit + 1}`,
        );
        const more = rows.length > limit;
        const invocations = rows.slice(0, limit);
        return answer(listSummary(invocations, more), { invocations, more });
      },
    }),
    tool('describe_invocation', {
      title: 'Describe an invocation',
      description:
        'One invocation whole: its sys_invocation row (status, target, times, deployment), its path through the invocation machine (each transition; the machine itself is the resource redstate://machines/invocation), its last failure and failed attempts, its journal, who called it and whom it called (with their statuses), and its output once it succeeded.',
      input: {
        invocation_id: z.string().describe('inv_…'),
        journal_limit: z
          .number()
          .int()
          .min(0)
          .max(10_000)
          .default(200)
          .describe('Journal entries shown, from the first'),
      },
      annotations: READ_ONLY,
      async run({ invocation_id, journal_limit }) {
        const view = await describeInvocation(deps, invocationParam(invocation_id), journal_limit);
        const row = view.invocation;
        const failure = view.last_failure ? `; last failure: ${String(view.last_failure['message'])}` : '';
        const summary = `${String(row['id'])} ${String(row['target'])}: ${String(row['status'])}${row['completion_result'] ? ` (${String(row['completion_result'])})` : ''}, ${view.path.length} transitions, ${view.journal.entries.length} journal entries, ${view.callees.length} callees${failure}`;
        return answer(summary, view);
      },
    }),
  ];
}
