/**
 * One invocation whole, as describe_invocation answers it: what the CLI and the web UI read,
 * from the sys_* tables through `/query`'s engine, plus the stored output from the runtime.
 */
import { NotFound } from '../errors.js';
import type { McpDeps } from './deps.js';
import { sqlRows, sqlString, type Rows } from './sql.js';
import { shownValue } from './values.js';

type Row = Rows[number];

/** Where a sys_invocation row says why its last attempt failed: view field → column. */
const LAST_FAILURE = {
  message: 'last_failure',
  error_code: 'last_failure_error_code',
  retry_count: 'retry_count',
  last_start_at: 'last_start_at',
  next_retry_at: 'next_retry_at',
  related_command_index: 'last_failure_related_command_index',
  related_command_name: 'last_failure_related_command_name',
  related_command_type: 'last_failure_related_command_type',
};

function lastFailure(row: Row) {
  if (row['last_failure'] === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(LAST_FAILURE).flatMap(([field, column]) =>
      row[column] !== undefined ? [[field, row[column]]] : [],
    ),
  );
}

/**
 * The callee a Call or OneWayCall command names: in its entry JSON, as the CLI reads it
 * (`invoked_id` stays NULL for these journals, as in the reference).
 */
function calleeOf(e: Row): { journal_index: unknown; entry_type: unknown; invocation_id?: string } {
  const command = (
    JSON.parse(String(e['entry_json'] ?? '{}')) as {
      Command?: Record<string, { request?: { invocation_id?: string | null } }>;
    }
  ).Command;
  const id = command ? Object.values(command)[0]?.request?.invocation_id : undefined;
  return { journal_index: e['index'], entry_type: e['entry_type'], ...(id ? { invocation_id: id } : {}) };
}

/** A journal row with its JSON form as a value rather than text. */
function journalEntry(e: Row) {
  const { entry_json, ...rest } = e;
  return { ...rest, ...(typeof entry_json === 'string' ? { entry: JSON.parse(entry_json) as unknown } : {}) };
}

const UNKNOWN = { status: 'unknown (purged, or not created yet)' };

export async function describeInvocation(deps: McpDeps, id: string, journalLimit: number) {
  const q = sqlString(id);
  const [row] = await sqlRows(deps, `SELECT * FROM sys_invocation WHERE id = ${q}`);
  if (!row) throw new NotFound(`The requested invocation '${id}' does not exist`);
  const [path, journal, calls] = await Promise.all([
    sqlRows(
      deps,
      `SELECT from_state, event, to_state, "at", attempt FROM sys_invocation_transitions WHERE id = ${q} ORDER BY index`,
    ),
    sqlRows(
      deps,
      `SELECT index, entry_type, name, sleep_wakeup_at, promise_name, appended_at, entry_json FROM sys_journal WHERE id = ${q} ORDER BY index LIMIT ${journalLimit}`,
    ),
    sqlRows(
      deps,
      `SELECT index, entry_type, entry_json FROM sys_journal WHERE id = ${q} AND entry_type IN ('Command: Call', 'Command: OneWayCall') ORDER BY index`,
    ),
  ]);
  const callees = calls.map(calleeOf).filter((c) => c.invocation_id !== undefined);
  const callerId = row['invoked_by_id'] as string | undefined;

  // The caller's and the callees' rows, in one query.
  const related = [...new Set([...(callerId ? [callerId] : []), ...callees.map((c) => c.invocation_id!)])];
  const others = new Map<unknown, Row>();
  if (related.length > 0) {
    for (const r of await sqlRows(
      deps,
      `SELECT id, target, status, completion_result FROM sys_invocation WHERE id IN (${related.map(sqlString).join(', ')})`,
    ))
      others.set(r['id'], r);
  }
  const statusOf = (other: unknown) => {
    const r = others.get(other);
    return r
      ? {
          status: r['status'],
          ...(r['completion_result'] !== undefined ? { completion_result: r['completion_result'] } : {}),
        }
      : UNKNOWN;
  };

  const out = row['status'] === 'completed' ? await deps.runtime.output(id) : undefined;
  const shown =
    out?.state === 'completed' && 'ok' in out.completion
      ? shownValue(Buffer.from(out.completion.ok, 'base64'))
      : undefined;
  const failure = lastFailure(row);
  return {
    invocation: row,
    path: path.map((p) => ({
      from: p['from_state'] ?? null,
      event: p['event'],
      to: p['to_state'],
      at: p['at'],
      attempt: p['attempt'],
    })),
    ...(failure ? { last_failure: failure } : {}),
    failed_attempts: path
      .filter((p) => p['event'] === 'attemptFailed')
      .map((p) => ({ at: p['at'], attempt: p['attempt'] })),
    journal: { length: row['journal_size'] ?? journal.length, entries: journal.map(journalEntry) },
    ...(row['invoked_by'] !== undefined
      ? {
          caller: {
            invoked_by: row['invoked_by'],
            ...(callerId ? { invocation_id: callerId, target: row['invoked_by_target'], ...statusOf(callerId) } : {}),
            ...(row['invoked_by_subscription_id'] !== undefined
              ? { subscription_id: row['invoked_by_subscription_id'] }
              : {}),
          },
        }
      : {}),
    callees: callees.map((c) => ({
      ...c,
      target: others.get(c.invocation_id)?.['target'],
      ...statusOf(c.invocation_id),
    })),
    ...(shown ? { output_encoding: shown.encoding, ...('value' in shown ? { output: shown.value } : {}) } : {}),
  };
}
