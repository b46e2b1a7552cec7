/**
 * The two encodings of a `/query` result (reference-behavior.md §3.6): JSON `{"rows":[…]}`
 * exactly as arrow-json prints it, and the Arrow IPC stream with the reference's types.
 */
import { tableFromIPC } from 'apache-arrow';
import { encodeJson, formatDuration, resultRows } from '../../src/query/json.js';
import type { ResultSet } from '../../src/query/result.js';
import { rfc3339Auto as formatTimestamp } from '../../src/timestamps.js';
import { ids, queryServerTest, type QueryServer } from '../support/query-fixture.js';

const test = queryServerTest();

async function text(t: { context: QueryServer }, sql: string): Promise<string> {
  const res = await t.context.query(sql, 'application/json');
  return res.text();
}

test('durations and timestamps print as chrono does', (t) => {
  t.is(formatDuration(86_400_000), 'PT86400S');
  t.is(formatDuration(0), 'P0D');
  t.is(formatDuration(4), 'PT0.004S');
  t.is(formatDuration(1500), 'PT1.5S');
  t.is(formatTimestamp(Date.UTC(2026, 10, 22, 1, 40, 53, 537)), '2026-11-22T01:40:53.537Z');
  t.is(formatTimestamp(Date.UTC(2026, 10, 22, 1, 40, 53)), '2026-11-22T01:40:53Z');
});

test('a completed invocation is the reference row: NULL columns left out, in column order', async (t) => {
  t.is(
    await text(t, `SELECT * FROM sys_invocation WHERE id = '${ids.greetDone}'`),
    `{"rows":[{"id":"${ids.greetDone}","target":"Greeter/greet","target_service_name":"Greeter","target_handler_name":"greet",` +
      '"target_service_ty":"service","idempotency_key":"01M80EKMN1P0TFBG4VPZ5QNXJS","invoked_by":"ingress",' +
      '"pinned_deployment_id":"dp_15mkDZVNLJ7axAH3QeEdtQt","pinned_service_protocol_version":6,"journal_size":2,' +
      '"journal_commands_size":2,"created_at":"2026-11-22T01:40:53.537Z","created_using_restate_version":"1.7.12",' +
      '"modified_at":"2026-11-22T01:40:53.555Z","running_at":"2026-11-22T01:40:53.537Z","completed_at":"2026-11-22T01:40:53.555Z",' +
      '"completion_retention":"PT86400S","journal_retention":"PT86400S","status":"completed","completion_result":"success"}]}',
  );
});

test('UInt64 partition keys are exact JSON numbers past 2^53', async (t) => {
  const body = await text(
    t,
    `SELECT partition_key, id, status FROM sys_invocation_status WHERE id = '${ids.greetDone}'`,
  );
  t.is(body, `{"rows":[{"partition_key":1000000000000000000,"id":"${ids.greetDone}","status":"completed"}]}`);
});

test('literals, an empty result, binary as hex and lists as arrays', async (t) => {
  t.is(
    await text(t, "SELECT 1 AS one, NULL AS n, 1.5 AS f, true AS b, 's' AS s"),
    '{"rows":[{"one":1,"f":1.5,"b":true,"s":"s"}]}',
  );
  t.is(await text(t, 'SELECT id FROM sys_invocation WHERE 1=0'), '{"rows":[]}');
  t.is(
    await text(
      t,
      "SELECT key, key_length, value_utf8, value, value_length FROM state WHERE service_name = 'Counter' AND service_key = 'k1'",
    ),
    '{"rows":[{"key":"count","key_length":5,"value_utf8":"10","value":"3130","value_length":2},' +
      '{"key":"blob","key_length":4,"value":"ff00","value_length":2}]}',
  );
  t.is(
    await text(
      t,
      `SELECT status, suspended_waiting_for_completions, suspended_waiting_for_signals, suspended_waiting_future_json FROM sys_invocation WHERE id = '${ids.counterSuspended}'`,
    ),
    '{"rows":[{"status":"suspended","suspended_waiting_for_completions":[1],"suspended_waiting_for_signals":[1],' +
      '"suspended_waiting_future_json":"{\\"FirstCompleted\\":[{\\"Single\\":{\\"CompletionId\\":1}},{\\"Single\\":{\\"SignalIndex\\":1}}]}"}]}',
  );
});

test('rows as values (the MCP tools): the forms of the JSON answer, and a 64-bit integer past 2^53 as its digits', (t) => {
  const result: ResultSet = {
    rowCount: 2,
    columns: [
      { name: 'partition_key', type: 'u64', nullable: false, values: [1_000_000_000_000_000_000n, 42n] },
      { name: 'at', type: 'ts', nullable: true, values: [Date.UTC(2026, 10, 22, 1, 40, 53, 537), null] },
      { name: 'raw', type: 'bin', nullable: true, values: [Uint8Array.of(0xff, 0), null] },
      { name: 'waits', type: 'list_u32', nullable: true, values: [[1, 2], null] },
    ],
  };
  t.deepEqual(resultRows(result), [
    { partition_key: '1000000000000000000', at: '2026-11-22T01:40:53.537Z', raw: 'ff00', waits: [1, 2] },
    { partition_key: 42 },
  ]);
  t.is(
    encodeJson(result),
    '{"rows":[{"partition_key":1000000000000000000,"at":"2026-11-22T01:40:53.537Z","raw":"ff00","waits":[1,2]},{"partition_key":42}]}',
  );
});

test('Arrow: sys_invocation has the reference schema and values', async (t) => {
  const table = await t.context.arrow(`SELECT * FROM sys_invocation WHERE id = '${ids.counterSuspended}'`);
  t.is(table.schema.fields.length, 51);
  const types = Object.fromEntries(
    table.schema.fields.map((f) => [f.name, `${String(f.type)}${f.nullable ? '' : '!'}`]),
  );
  t.like(types, {
    id: 'LargeUtf8',
    pinned_service_protocol_version: 'Uint32',
    retry_count: 'Uint64',
    created_at: 'Timestamp<MILLISECOND, +00:00>',
    completion_retention: 'Duration<MILLISECOND>',
    suspended_waiting_for_completions: 'List<Uint32>',
    status: 'LargeUtf8!',
  });
  const row = table.get(0)!.toJSON() as Record<string, unknown>;
  t.is(row.status, 'suspended');
  t.is(row.target, 'Counter/k1/add');
  t.is(row.created_at, Date.UTC(2026, 10, 22, 1, 40, 55, 537));
  t.is(row.journal_retention, 86_400_000n);
  t.deepEqual([...(row.suspended_waiting_for_completions as Iterable<number>)], [1]);
});

test('Arrow: UInt64, binary and literal types', async (t) => {
  const status = await t.context.arrow(`SELECT partition_key FROM sys_invocation_status WHERE id = '${ids.greetDone}'`);
  t.is(String(status.schema.fields[0]!.type), 'Uint64');
  t.is(status.get(0)!.toJSON().partition_key, 1_000_000_000_000_000_000n);

  const state = await t.context.arrow(
    "SELECT value FROM state WHERE service_name = 'Counter' AND service_key = 'k1' AND key = 'blob'",
  );
  t.is(String(state.schema.fields[0]!.type), 'LargeBinary');
  t.deepEqual([...(state.get(0)!.toJSON().value as Uint8Array)], [0xff, 0x00]);

  const one = await t.context.arrow('SELECT 1 AS one');
  t.deepEqual(
    one.schema.fields.map((f) => [f.name, String(f.type), f.nullable]),
    [['one', 'Int64', false]],
  );
  t.is(one.get(0)!.toJSON().one, 1n);
});

test('Arrow: an empty result still carries its schema', async (t) => {
  const table = await t.context.arrow('SELECT id, status FROM sys_invocation WHERE 1=0');
  t.is(table.numRows, 0);
  t.deepEqual(
    table.schema.fields.map((f) => f.name),
    ['id', 'status'],
  );
});

test('any accept other than exactly application/json gets Arrow', async (t) => {
  for (const accept of [
    '*/*',
    'text/plain',
    'application/vnd.apache.arrow.stream',
    'application/json; charset=utf-8',
  ]) {
    const res = await t.context.query('SELECT 1 AS one', accept);
    t.is(res.headers.get('content-type'), 'application/vnd.apache.arrow.stream', accept);
    t.is(tableFromIPC(new Uint8Array(await res.arrayBuffer())).numRows, 1);
  }
  const none = await fetch(`${t.context.url}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"query":"SELECT 1 AS one"}',
  });
  t.is(none.headers.get('content-type'), 'application/vnd.apache.arrow.stream');
});
