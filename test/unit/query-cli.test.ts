/**
 * Every statement the `restate` CLI 1.7.12 sends to `POST /query` (reference-behavior.md §4,
 * texts from ref-transcripts/cli-admin-requests.txt with our fixture's ids), with the accept
 * header it sends: Arrow for its counts and `restate sql`, JSON for the rest.
 */
import type { Table } from 'apache-arrow';
import { DEPLOYMENT_ID, ids, queryServerTest } from '../support/query-fixture.js';

const test = queryServerTest();

const fieldsOf = (table: Table) =>
  table.schema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable ? 'null' : 'notnull'}`);

const countAll = (where: string) => `SELECT COUNT(1) FROM (SELECT
                       *
                   FROM sys_invocation inv
                   LIMIT 50000
                   )
                   ${where}`;

const listIds = (where: string, limit: number) => `SELECT
                       id
                   FROM sys_invocation inv
                   ${where}
                   ORDER BY inv.created_at DESC, inv.id
                   LIMIT ${limit}`;

const detail = (where: string) => `SELECT
                       inv.id,
                       inv.target,
                       inv.target_service_ty,
                       inv.idempotency_key,
                       inv.status,
                       inv.created_at,
                       inv.modified_at as state_modified_at,
                       inv.pinned_deployment_id,
                       inv.retry_count as num_retries,
                       inv.last_failure as last_failure_message,
                       inv.last_failure_related_entry_index as last_failure_entry_index,
                       inv.last_failure_related_entry_name as last_failure_entry_name,
                       inv.last_failure_related_entry_type as last_failure_entry_ty,
                       inv.last_attempt_deployment_id,
                       inv.last_attempt_server,
                       inv.next_retry_at,
                       inv.last_start_at,
                       inv.invoked_by_id,
                       inv.invoked_by_target,
                       inv.trace_id,
                       inv.completion_result,
                       inv.completion_failure,
                       dp.id IS NOT NULL as pinned_deployment_exists
                   FROM sys_invocation inv
                   LEFT JOIN sys_deployment dp ON dp.id = inv.pinned_deployment_id
                   ${where}
                   ORDER BY inv.created_at DESC, inv.id`;

const active = [ids.greetScheduled, ids.flakyBackingOff, ids.counterPending, ids.counterSuspended, ids.sleepyRunning];

test('invocations list: Arrow count(Int64(1)) of active invocations, then ids, then details', async (t) => {
  const count = await t.context.arrow(countAll("WHERE status != 'completed'"));
  t.deepEqual(fieldsOf(count), ['count(Int64(1)):Int64:notnull']);
  t.deepEqual(count.getChild('count(Int64(1))')?.toArray(), BigInt64Array.from([5n]));

  const listed = await t.context.rows(listIds("WHERE status != 'completed'", 100));
  t.deepEqual(
    listed,
    active.map((id) => ({ id })),
  );

  const inList = active.map((id) => `'${id}'`).join(',');
  const rows = await t.context.rows(detail(`WHERE status != 'completed' AND inv.id in (${inList})`));
  t.deepEqual(
    rows.map((r) => r.id),
    active,
  );
  const flaky = rows.find((r) => r.id === ids.flakyBackingOff)!;
  t.like(flaky, {
    target: 'Greeter/flaky',
    target_service_ty: 'service',
    status: 'backing-off',
    num_retries: 2,
    last_failure_message:
      '[500 Internal] flaky failure attempt 2\nError: flaky failure attempt 2\n    at flaky (svc.mjs:26:32)',
    last_failure_entry_index: 1,
    last_failure_entry_name: 'step',
    last_failure_entry_ty: 'Run',
    last_attempt_deployment_id: DEPLOYMENT_ID,
    last_attempt_server: 'restate-sdk-typescript/1.17.2',
    next_retry_at: '2026-11-22T01:40:59.037Z',
    pinned_deployment_exists: true,
  });
  t.is(flaky.state_modified_at, '2026-11-22T01:40:58.037Z');
  // Never started: no pinned deployment, and the join finds none.
  t.deepEqual(
    rows.find((r) => r.id === ids.counterPending),
    {
      id: ids.counterPending,
      target: 'Counter/k1/add',
      target_service_ty: 'virtual_object',
      status: 'pending',
      created_at: '2026-11-22T01:40:56.537Z',
      state_modified_at: '2026-11-22T01:40:56.537Z',
      pinned_deployment_exists: false,
    },
  );
});

test('invocations list --all --limit 3: count of everything, three ids, their details', async (t) => {
  const count = await t.context.arrow(countAll(''));
  t.deepEqual(count.getChild('count(Int64(1))')?.toArray(), BigInt64Array.from([8n]));
  const listed = await t.context.rows(listIds('', 3));
  t.deepEqual(listed, [{ id: ids.calledByService }, { id: ids.signupFailed }, { id: ids.greetScheduled }]);
  const rows = await t.context.rows(detail(`WHERE inv.id in (${listed.map((r) => `'${String(r.id)}'`).join(',')})`));
  t.deepEqual(
    rows.map((r) => [r.id, r.status, r.completion_result, r.completion_failure, r.invoked_by_id, r.invoked_by_target]),
    [
      [ids.calledByService, 'completed', 'success', undefined, ids.sleepyRunning, 'Greeter/sleepy'],
      [ids.signupFailed, 'completed', 'failure', '[409] Cancelled', undefined, undefined],
      [ids.greetScheduled, 'scheduled', undefined, undefined, undefined, undefined],
    ],
  );
});

test.serial('invocations describe: id lookup, details, the two information_schema counts, the journal', async (t) => {
  const id = ids.sleepyRunning;
  t.deepEqual(
    await t.context.rows(`SELECT
                       id
                   FROM sys_invocation inv
                   WHERE inv.id = '${id}'
                   
                   LIMIT 1`),
    [{ id }],
  );
  const details = await t.context.rows(
    detail(`WHERE inv.id = '${id}' AND inv.id in ('${id}')
                   `),
  );
  t.is(details.length, 1);
  t.like(details[0], {
    status: 'running',
    num_retries: 0,
    idempotency_key: '01M80ENNQ748273EASCQKG9Z29',
    pinned_deployment_exists: true,
  });

  const promise = await t.context.arrow(`SELECT COUNT(*) FROM information_schema.columns
                       WHERE
                           table_name = 'sys_journal'
                           AND column_name IN ('promise_name')`);
  t.deepEqual(fieldsOf(promise), ['count(*):Int64:notnull']);
  t.deepEqual(promise.getChild('count(*)')?.toArray(), BigInt64Array.from([1n]));
  const v2 = await t.context.arrow(`SELECT COUNT(*) FROM information_schema.columns
                       WHERE
                           table_name = 'sys_journal'
                           AND column_name IN ('version', 'entry_json', 'appended_at')`);
  t.deepEqual(v2.getChild('count(*)')?.toArray(), BigInt64Array.from([3n]));

  const before = t.context.store.reads.readJournal.length;
  const journal = await t.context.rows(`SELECT
                       sj.index,
                       sj.entry_type,
                       sj.completed,
                       sj.invoked_id,
                       sj.invoked_target,
                       sj.sleep_wakeup_at,
                       sj.name,
                       sj.promise_name,
                       sj.version, sj.entry_json, sj.appended_at
                   FROM sys_journal sj
                   WHERE
                       sj.id = '${id}'
                   ORDER BY index DESC
                   LIMIT 100`);
  // The pinned id is the only journal read.
  t.deepEqual(t.context.store.reads.readJournal.slice(before), [id]);
  t.deepEqual(
    journal.map((r) => [r.index, r.entry_type, r.name]),
    [
      [5, 'Command: Sleep', ''],
      [4, 'Notification: CallInvocationId', undefined],
      [3, 'Command: Call', ''],
      [2, 'Notification: Run', undefined],
      [1, 'Command: Run', 'step-a'],
      [0, 'Command: Input', ''],
    ],
  );
  t.like(journal[0], { sleep_wakeup_at: '2026-11-22T01:40:59.537Z', version: 2 });
  // Restate 1.7.12 leaves these NULL for version-2 journals; the CLI reads entry_json instead.
  t.is(journal[2]!.invoked_id, undefined);
  t.is(journal[2]!.invoked_target, undefined);
  t.regex(
    String(journal[2]!.entry_json),
    new RegExp(
      `^\\{"Command":\\{"Call":\\{"request":\\{"invocation_id":"${ids.calledByService}","invocation_target":\\{"Service":\\{"name":"Greeter","handler":"greet","scope":null\\}\\}`,
    ),
  );
  t.is(journal[4]!.entry_json, '{"Command":{"Run":{"completion_id":1,"name":"step-a"}}}');
});

test('state get / kv get and state clear read one object key', async (t) => {
  t.deepEqual(
    await t.context.rows("select key, value from state where service_name = 'Counter' and service_key = 'k1' ;"),
    [
      { key: 'count', value: '3130' },
      { key: 'blob', value: 'ff00' },
    ],
  );
  t.deepEqual(
    await t.context.rows("select key, value from state where service_name = 'Counter' and service_key = 'q1' ;"),
    [],
  );
  t.deepEqual(
    await t.context.rows(
      "SELECT service_name, service_key, key, value FROM state WHERE service_name = 'Counter' AND service_key = 'k9'",
    ),
    [],
  );
  t.deepEqual(
    await t.context.rows(
      "SELECT service_name, service_key, key, value FROM state WHERE service_name = 'Counter' AND service_key = 'k1'",
    ),
    [
      { service_name: 'Counter', service_key: 'k1', key: 'count', value: '3130' },
      { service_name: 'Counter', service_key: 'k1', key: 'blob', value: 'ff00' },
    ],
  );
});

test('cancel, kill, resume, pause, purge and restart-as-new select by status, with `invoked` for running', async (t) => {
  const byId = (id: string, cond: string) =>
    `SELECT id, target FROM sys_invocation_status WHERE id = '${id}' AND ${cond} LIMIT 500`;
  t.deepEqual(await t.context.rows(byId(ids.sleepyRunning, "status != 'completed'")), [
    { id: ids.sleepyRunning, target: 'Greeter/sleepy' },
  ]);
  t.deepEqual(await t.context.rows(byId(ids.greetDone, "status != 'completed'")), []);
  t.deepEqual(await t.context.rows(byId(ids.sleepyRunning, "status IN ('paused', 'invoked', 'suspended')")), [
    { id: ids.sleepyRunning, target: 'Greeter/sleepy' },
  ]);
  t.deepEqual(await t.context.rows(byId(ids.counterSuspended, "status IN ('invoked', 'suspended')")), [
    { id: ids.counterSuspended, target: 'Counter/k1/add' },
  ]);
  t.deepEqual(await t.context.rows(byId(ids.counterPending, "status IN ('invoked', 'suspended')")), []);
  t.deepEqual(await t.context.rows(byId(ids.greetDone, "status = 'completed'")), [
    { id: ids.greetDone, target: 'Greeter/greet' },
  ]);
});

test('cancel by target matches a service handler, or any key of a keyed handler, with LIKE', async (t) => {
  const byTarget = (target: string) =>
    `SELECT id, target FROM sys_invocation_status WHERE ((target = '${target}' AND target_service_ty = 'service') OR (target LIKE '${target}/%' AND target_service_ty != 'service')) AND status != 'completed' LIMIT 500`;
  t.deepEqual(await t.context.rows(byTarget('Greeter/sleepy')), [{ id: ids.sleepyRunning, target: 'Greeter/sleepy' }]);
  const counter = await t.context.rows(byTarget('Counter/k1'));
  t.deepEqual(counter.map((r) => r.id).sort(), [ids.counterPending, ids.counterSuspended].sort());
});

test('services describe counts active invocations pinned to a deployment, as Arrow inv_count', async (t) => {
  const table = await t.context.arrow(`SELECT COUNT(1) AS inv_count
                       FROM sys_invocation_status
                       WHERE pinned_deployment_id = '${DEPLOYMENT_ID}' AND status != 'completed'`);
  t.deepEqual(fieldsOf(table), ['inv_count:Int64:notnull']);
  t.deepEqual(table.getChild('inv_count')?.toArray(), BigInt64Array.from([3n]));
});

test('restate sql answers Arrow with the reference types', async (t) => {
  const table = await t.context.arrow('SELECT id, status FROM sys_invocation LIMIT 3');
  t.deepEqual(fieldsOf(table), ['id:LargeUtf8:null', 'status:LargeUtf8:notnull']);
  t.is(table.numRows, 3);
});

test('rules list / rules set lookups and vqueues list answer empty row sets', async (t) => {
  const rules = 'SELECT pattern, concurrency, description, disabled, version, last_modified FROM sys_rules';
  t.deepEqual(await t.context.rows(`${rules} ORDER BY pattern`), []);
  t.deepEqual(await t.context.rows(`${rules} WHERE pattern = 'scope1/*'`), []);
  const res = await t.context.query(
    'SELECT id, is_active, queue_is_paused, service_name, scope, limit_key, lock_name, created_at, last_enqueued_at, last_start_at, last_attempt_at, last_finish_at, num_inbox, num_running, num_suspended, num_paused, num_finished FROM sys_vqueue_meta LIMIT 100',
  );
  t.is(res.status, 200);
  t.is(await res.text(), '{"rows":[]}');
});

test('services status: FIRST_VALUE(… ORDER BY …) and first_value(…) are aggregates, as DataFusion has them', async (t) => {
  // The texts of `restate services status` 1.7.12 (captured from the CLI against restate-server).
  const byStatus = await t.context.rows(`
            SELECT
                target_service_name,
                target_handler_name,
                status,
                COUNT(1) as num_invocations,
                MIN(created_at) as oldest_at,
                FIRST_VALUE(id ORDER BY created_at ASC) as oldest_invocation
            FROM sys_invocation
            WHERE target_service_name IN ('Greeter')
            GROUP BY target_service_name, target_handler_name, status
            ORDER BY target_handler_name`);
  const greet = byStatus.filter((r) => r['target_handler_name'] === 'greet' && r['status'] === 'completed');
  t.deepEqual(
    greet.map((r) => [r['num_invocations'], r['oldest_invocation']]),
    [[2, ids.greetDone]],
  );
  const locks = await t.context.rows(`
            SELECT
                target_service_name as service_name,
                target_service_key as service_key,
                status as invocation_status,
                first_value(id) as invocation_holding_lock,
                first_value(target_handler_name) as invocation_method_holding_lock,
                sum(retry_count) as num_retries
            FROM sys_invocation
            WHERE status != 'pending' AND target_service_name IN ('Counter')
            GROUP BY target_service_name, target_service_key, status`);
  t.deepEqual(locks, [
    {
      service_name: 'Counter',
      service_key: 'k1',
      invocation_status: 'suspended',
      invocation_holding_lock: ids.counterSuspended,
      invocation_method_holding_lock: 'add',
    },
  ]);
});
