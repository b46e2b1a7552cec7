/**
 * The tables behind `/query` (reference-behavior.md §3.6): every table answers with the
 * reference's columns, information_schema describes them, rows come from the store and the
 * registry, pinned ids limit what is read, and concurrent queries stay apart.
 */
import { tableFromIPC } from 'apache-arrow';
import { ARROW_TYPE_NAME, PUBLIC_TABLES } from '../../src/query/tables.js';
import { DEPLOYMENT_ID, greetHistory, ids, queryServerTest } from '../support/query-fixture.js';

const test = queryServerTest();

/** apache-arrow's names for our column types. */
const ARROW_JS: Record<string, string> = {
  utf8: 'LargeUtf8',
  u64: 'Uint64',
  u32: 'Uint32',
  bool: 'Bool',
  ts: 'Timestamp<MILLISECOND, +00:00>',
  dur: 'Duration<MILLISECOND>',
  bin: 'LargeBinary',
  list_u32: 'List<Uint32>',
  list_utf8: 'List<LargeUtf8>',
};

test('the reference tables (and our transitions and subscription tables) exist, each with its columns, Arrow types and nullability', async (t) => {
  t.deepEqual([...PUBLIC_TABLES.keys()].sort(), [
    'state',
    'sys_deployment',
    'sys_inbox',
    'sys_invocation',
    'sys_invocation_state',
    'sys_invocation_status',
    'sys_invocation_transitions',
    'sys_journal',
    'sys_journal_events',
    'sys_keyed_service_status',
    'sys_locks',
    'sys_partitions',
    'sys_promise',
    'sys_rules',
    'sys_schedule',
    'sys_scheduler',
    'sys_service',
    'sys_state_expiry',
    'sys_subscription_progress',
    'sys_user_limits',
    'sys_vqueue_entry_status',
    'sys_vqueue_meta',
    'sys_vqueues',
  ]);
  for (const table of PUBLIC_TABLES.values()) {
    const res = await t.context.query(`SELECT * FROM ${table.name} LIMIT 1`, '*/*');
    t.is(res.status, 200, table.name);
    const schema = tableFromIPC(new Uint8Array(await res.arrayBuffer())).schema;
    t.deepEqual(
      schema.fields.map((f) => [f.name, String(f.type), f.nullable]),
      table.columns.map((c) => [c.name, ARROW_JS[c.type], c.nullable]),
      table.name,
    );
  }
});

test('sys_invocation_transitions lists each kept history entry of an invocation, in order', async (t) => {
  const rows = await t.context.rows(
    `SELECT id, index, from_state, event, to_state, "at", attempt FROM sys_invocation_transitions WHERE id = '${ids.greetDone}' ORDER BY index`,
  );
  t.deepEqual(
    rows,
    greetHistory.map((h, i) => ({
      id: ids.greetDone,
      index: i,
      // JSON rows leave nulls out, as the reference's do.
      ...(h.from === null ? {} : { from_state: h.from }),
      event: h.event,
      to_state: h.to,
      at: new Date(h.at).toISOString(),
      attempt: h.attempt,
    })),
  );
  t.deepEqual(
    await t.context.rows(`SELECT COUNT(*) AS n FROM sys_invocation_transitions WHERE id = '${ids.sleepyRunning}'`),
    [{ n: 0 }],
  );
});

test('information_schema.columns and .tables describe exactly those tables', async (t) => {
  const counts = await t.context.rows(
    "SELECT table_name, COUNT(*) AS n FROM information_schema.columns WHERE table_schema = 'public' GROUP BY table_name ORDER BY table_name",
  );
  t.deepEqual(
    counts,
    [...PUBLIC_TABLES.values()]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((tb) => ({ table_name: tb.name, n: tb.columns.length })),
  );
  t.deepEqual(
    await t.context.rows(
      "SELECT column_name, ordinal_position, is_nullable, data_type FROM information_schema.columns WHERE table_name = 'sys_invocation' AND column_name IN ('id', 'status', 'created_at', 'completion_retention', 'suspended_waiting_for_completions') ORDER BY ordinal_position",
    ),
    [
      { column_name: 'id', ordinal_position: 1, is_nullable: 'YES', data_type: ARROW_TYPE_NAME.utf8 },
      { column_name: 'created_at', ordinal_position: 22, is_nullable: 'YES', data_type: 'Timestamp(ms, "+00:00")' },
      { column_name: 'completion_retention', ordinal_position: 30, is_nullable: 'YES', data_type: 'Duration(ms)' },
      {
        column_name: 'suspended_waiting_for_completions',
        ordinal_position: 32,
        is_nullable: 'YES',
        data_type: 'List(UInt32)',
      },
      { column_name: 'status', ordinal_position: 49, is_nullable: 'NO', data_type: 'LargeUtf8' },
    ],
  );
  const tables = await t.context.rows(
    "SELECT table_catalog, table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
  );
  t.is(tables.length, PUBLIC_TABLES.size);
  t.deepEqual(tables[0], {
    table_catalog: 'restate',
    table_schema: 'public',
    table_name: 'state',
    table_type: 'BASE TABLE',
  });
});

test('sys_service and sys_deployment come from the registry', async (t) => {
  t.deepEqual(await t.context.rows('SELECT * FROM sys_service ORDER BY name'), [
    { name: 'Counter', revision: 2, public: true, ty: 'virtual_object', deployment_id: DEPLOYMENT_ID },
    { name: 'Greeter', revision: 2, public: true, ty: 'service', deployment_id: DEPLOYMENT_ID },
    { name: 'Signup', revision: 2, public: true, ty: 'workflow', deployment_id: DEPLOYMENT_ID },
  ]);
  t.deepEqual(await t.context.rows('SELECT * FROM sys_deployment'), [
    {
      id: DEPLOYMENT_ID,
      ty: 'http',
      endpoint: 'http://localhost:9080/',
      created_at: '2026-11-22T01:40:33.537Z',
      min_service_protocol_version: 5,
      max_service_protocol_version: 7,
      services: ['Greeter', 'Counter', 'Signup'],
    },
  ]);
});

test('keyed status, inbox and invoker state follow the invocations', async (t) => {
  t.deepEqual(await t.context.rows('SELECT service_name, service_key, invocation_id FROM sys_keyed_service_status'), [
    { service_name: 'Counter', service_key: 'k1', invocation_id: ids.counterSuspended },
  ]);
  t.deepEqual(await t.context.rows('SELECT service_name, service_key, id, sequence_number FROM sys_inbox'), [
    { service_name: 'Counter', service_key: 'k1', id: ids.counterPending, sequence_number: 0 },
  ]);
  t.deepEqual(
    await t.context.rows(
      'SELECT id, in_flight, retry_count, last_failure_error_code, last_failure_related_command_type FROM sys_invocation_state ORDER BY id',
    ),
    [
      { id: ids.sleepyRunning, in_flight: true, retry_count: 0 },
      {
        id: ids.flakyBackingOff,
        in_flight: false,
        retry_count: 2,
        last_failure_error_code: 'RT0007',
        last_failure_related_command_type: 'Run',
      },
    ].sort((a, b) => (a.id < b.id ? -1 : 1)),
  );
  t.deepEqual(
    await t.context.rows(
      "SELECT completed, promise_name FROM sys_journal sj WHERE sj.entry_type = 'Command: GetPromise'",
    ),
    [{ promise_name: 'verified' }],
  );
});

test.serial('a pinned id loads one invocation; an unpinned reference loads them all', async (t) => {
  const reads = t.context.store.reads;
  let before = reads.loadInvocation;
  t.deepEqual(await t.context.rows(`SELECT id FROM sys_invocation WHERE id = '${ids.greetDone}'`), [
    { id: ids.greetDone },
  ]);
  t.is(reads.loadInvocation - before, 1);

  before = reads.loadInvocation;
  const joined = await t.context.rows(
    `SELECT a.id FROM sys_invocation a JOIN sys_invocation b ON a.invoked_by_id = b.id WHERE b.id = '${ids.sleepyRunning}'`,
  );
  t.deepEqual(joined, [{ id: ids.calledByService }]);
  t.true(reads.loadInvocation - before >= 8);

  t.deepEqual(await t.context.rows("SELECT count(*) AS n FROM sys_invocation WHERE id IN ('nope', 'inv_123')"), [
    { n: 0 },
  ]);
});

test('CTEs, qualified names and functions work', async (t) => {
  t.deepEqual(await t.context.rows('WITH x AS (SELECT id FROM sys_invocation) SELECT count(*) AS n FROM x'), [
    { n: 8 },
  ]);
  t.deepEqual(await t.context.rows('SELECT count(*) AS n FROM restate.public.sys_invocation'), [{ n: 8 }]);
  t.deepEqual(await t.context.rows('SELECT count(*) AS n FROM public.sys_invocation_status'), [{ n: 8 }]);
  t.deepEqual(
    await t.context.rows(
      "SELECT status, count(*) AS n FROM sys_invocation GROUP BY status HAVING status IN ('completed', 'running') ORDER BY status",
    ),
    [
      { status: 'completed', n: 3 },
      { status: 'running', n: 1 },
    ],
  );
  t.deepEqual(
    await t.context.rows("SELECT max(retry_count) AS m FROM sys_invocation WHERE created_at > TIMESTAMP '2026-01-01'"),
    [{ m: 2 }],
  );
});

test('concurrent queries do not see each other’s rows', async (t) => {
  const sqls = Array.from({ length: 12 }, (_, i) =>
    i % 3 === 0
      ? 'SELECT count(*) AS n FROM sys_invocation'
      : i % 3 === 1
        ? 'SELECT count(*) AS n FROM sys_journal'
        : 'SELECT count(*) AS n FROM state',
  );
  const results = await Promise.all(sqls.map((sql) => t.context.rows(sql)));
  results.forEach((r, i) => t.deepEqual(r, [{ n: i % 3 === 0 ? 8 : i % 3 === 1 ? 13 : 2 }], sqls[i]));
});

test.serial('journals are read only for columns that need them', async (t) => {
  const reads = t.context.store.reads;
  let before = reads.readJournal.length;
  t.deepEqual(
    await t.context.rows(
      "SELECT COUNT(1) AS n FROM (SELECT * FROM sys_invocation inv LIMIT 50000) WHERE status != 'completed'",
    ),
    [{ n: 5 }],
  );
  t.is(reads.readJournal.length, before);
  before = reads.readJournal.length;
  t.deepEqual(
    await t.context.rows(
      `SELECT journal_size, journal_commands_size FROM sys_invocation WHERE id = '${ids.sleepyRunning}'`,
    ),
    [{ journal_size: 6, journal_commands_size: 4 }],
  );
  t.deepEqual(reads.readJournal.slice(before), [ids.sleepyRunning]);
});
