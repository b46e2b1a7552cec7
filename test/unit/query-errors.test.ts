/**
 * `POST /query` errors, byte for byte as Restate 1.7.12 answers them
 * (reference-behavior.md §3.6, ref-transcripts/admin-query.txt): SQL errors are JSON
 * `{"message"}` without `restate_code`; body errors are axum's plain-text extractor errors.
 */
import { QueryError } from '../../src/query/query-error.js';
import { QueryEngine } from '../../src/query/engine.js';
import { queryServerTest, type QueryServer } from '../support/query-fixture.js';

const test = queryServerTest();

async function expectError(
  t: { context: QueryServer; is: (a: unknown, b: unknown) => void },
  sql: string,
  status: number,
  message: string,
) {
  const res = await t.context.query(sql);
  t.is(res.status, status);
  t.is(res.headers.get('content-type'), 'application/json');
  t.is(await res.text(), JSON.stringify({ message }));
}

test('unknown table: 500 planning error naming restate.public', async (t) => {
  await expectError(
    t,
    'SELECT * FROM nope',
    500,
    "Datafusion error: Error during planning: table 'restate.public.nope' not found",
  );
});

test('parse error: 400 with sqlparser wording and position', async (t) => {
  await expectError(
    t,
    'SELEC broken',
    400,
    'Datafusion error: SQL error: ParserError("Expected: an SQL statement, found: SELEC at Line: 1, Column: 1")',
  );
});

test('unknown column: 500 schema error listing every field of the table', async (t) => {
  // admin-query.txt, verbatim.
  const fields = [
    'id',
    'vqueue_id',
    'target',
    'target_service_name',
    'target_service_key',
    'target_handler_name',
    'target_service_ty',
    'scope',
    'limit_key',
    'idempotency_key',
    'invoked_by',
    'invoked_by_service_name',
    'invoked_by_id',
    'invoked_by_subscription_id',
    'invoked_by_target',
    'restarted_from',
    'pinned_deployment_id',
    'pinned_service_protocol_version',
    'trace_id',
    'journal_size',
    'journal_commands_size',
    'created_at',
    'created_using_restate_version',
    'modified_at',
    'inboxed_at',
    'scheduled_at',
    'scheduled_start_at',
    'running_at',
    'completed_at',
    'completion_retention',
    'journal_retention',
    'suspended_waiting_for_completions',
    'suspended_waiting_for_signals',
    'suspended_waiting_future_json',
    'retry_count',
    'last_start_at',
    'next_retry_at',
    'last_attempt_deployment_id',
    'last_attempt_server',
    'last_failure',
    'last_failure_error_code',
    'last_failure_related_entry_index',
    'last_failure_related_entry_name',
    'last_failure_related_entry_type',
    'last_failure_related_command_index',
    'last_failure_related_command_name',
    'last_failure_related_command_type',
    'last_awaiting_on_future_json',
    'status',
    'completion_result',
    'completion_failure',
  ];
  const message = `Datafusion error: Schema error: No field named nope. Valid fields are ${fields.map((f) => `sys_invocation.${f}`).join(', ')}.`;
  await expectError(t, 'SELECT nope FROM sys_invocation', 500, message);
  t.is(fields.length, 51);
});

test('DML: 400 "DML not supported"', async (t) => {
  await expectError(
    t,
    'DELETE FROM sys_invocation',
    400,
    'Datafusion error: Error during planning: DML not supported: Delete',
  );
  await expectError(
    t,
    "UPDATE sys_rules SET pattern = 'x'",
    400,
    'Datafusion error: Error during planning: DML not supported: Update',
  );
  await expectError(
    t,
    "INSERT INTO sys_rules VALUES ('a', 1, 'd', false, 1, now())",
    400,
    'Datafusion error: Error during planning: DML not supported: Insert Into',
  );
});

test('DDL, settings and several statements are refused too', async (t) => {
  await expectError(
    t,
    'CREATE TABLE x (a INT)',
    400,
    'Datafusion error: Error during planning: DDL not supported: Create',
  );
  await expectError(
    t,
    "SET memory_limit = '10GB'",
    500,
    "Datafusion error: This feature is not implemented: Unsupported SQL statement: SET memory_limit = '10GB'",
  );
  await expectError(
    t,
    'SELECT 1; SELECT 2',
    500,
    'Datafusion error: This feature is not implemented: The context currently only supports a single SQL statement',
  );
});

test('queries see no files: read_* table functions do not exist, as in the reference', async (t) => {
  await expectError(
    t,
    "SELECT * FROM read_csv('/etc/hostname')",
    400,
    "Datafusion error: Error during planning: table function 'read_csv' not found",
  );
});

test('body errors are axum extractor texts: {} 422, garbage 400, no content-type 415', async (t) => {
  const post = (body: string, headers: Record<string, string>) =>
    fetch(`${t.context.url}/query`, { method: 'POST', headers, body });
  const missing = await post('{}', { 'content-type': 'application/json', accept: 'application/json' });
  t.is(missing.status, 422);
  t.is(missing.headers.get('content-type'), 'text/plain; charset=utf-8');
  t.is(
    await missing.text(),
    'Failed to deserialize the JSON body into the target type: missing field `query` at line 1 column 2',
  );

  const garbage = await post('garbage', { 'content-type': 'application/json', accept: 'application/json' });
  t.is(garbage.status, 400);
  t.is(await garbage.text(), 'Failed to parse the request body as JSON: expected value at line 1 column 1');

  const noType = await post('{"query":"SELECT 1"}', { accept: 'application/json' });
  t.is(noType.status, 415);
  t.is(await noType.text(), 'Expected request with `Content-Type: application/json`');

  const wrongType = await post('{"query":5}', { 'content-type': 'application/json' });
  t.is(wrongType.status, 422);
  t.is(
    await wrongType.text(),
    'Failed to deserialize the JSON body into the target type: query: invalid type: integer `5`, expected a string at line 1 column 10',
  );
});

test('GET /query is 405 with allow: POST', async (t) => {
  const res = await fetch(`${t.context.url}/query`);
  t.is(res.status, 405);
  t.is(res.headers.get('allow'), 'POST');
  t.is(await res.text(), '');
});

test('a query running past the time limit is interrupted: 500', async (t) => {
  const engine = new QueryEngine({ timeoutMs: 200 });
  try {
    const err = await t.throwsAsync(
      engine.query(
        'SELECT count(*) FROM range(100000) a, range(100000) b WHERE (a.range * 7 + b.range) % 1000003 = 1',
        async () => [],
      ),
      {
        instanceOf: QueryError,
      },
    );
    t.is(err?.status, 500);
    t.is(
      err?.message,
      'Datafusion error: Resources exhausted: the query ran past its time limit of 200 ms (REDSTATE_QUERY_TIMEOUT_MS)',
    );
  } finally {
    await engine.close();
  }
});
