/**
 * `POST /query` against the server process with a real SDK service (reference-behavior.md
 * §3.6, §4): invocations made through the ingress show up in sys_invocation with their
 * journals in sys_journal; the registry in sys_service and sys_deployment; and the CLI's
 * Arrow count works.
 */
import anyTest, { type TestFn } from 'ava';
import { tableFromIPC } from 'apache-arrow';
import { sqlRows, startStack, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Stack & { ids: Record<string, string> }>;

const query = (stack: Stack, sql: string) => sqlRows(stack.admin, sql);

test.before(async (t) => {
  const stack = await startStack('embedded');
  const greet = await stack.ingress.post('restate/call/Durable/greet', { json: 'x' });
  const steps = await stack.ingress.post('restate/call/Durable/steps', { json: { tag: 'q1', sleepMs: 10 } });
  // Still sleeping while the tests run: the one active invocation.
  const sleeping = await stack.ingress.post('restate/send/Durable/steps', { json: { tag: 'q2', sleepMs: 60_000 } });
  if (greet.statusCode !== 200 || steps.statusCode !== 200 || sleeping.statusCode !== 202) {
    throw new Error(`invocations failed: ${greet.statusCode} ${steps.statusCode} ${sleeping.statusCode}`);
  }
  const ids = {
    greet: String(greet.headers['x-restate-id']),
    steps: String(steps.headers['x-restate-id']),
    sleeping: (JSON.parse(sleeping.body) as { invocationId: string }).invocationId,
  };
  t.context = Object.assign(stack, { ids });
  // The sent invocation has journaled its three steps and its sleep.
  await waitFor(
    async () =>
      (
        await query(
          stack,
          `SELECT index FROM sys_journal WHERE id = '${ids.sleeping}' AND entry_type = 'Command: Sleep'`,
        )
      ).length === 1,
    20_000,
  );
});

test.after.always(async (t) => {
  await t.context.stop?.();
});

test('sys_invocation shows each invocation with its target, status and outcome', async (t) => {
  const { ids } = t.context;
  const rows = await query(
    t.context,
    'SELECT id, target, target_service_ty, invoked_by, status, completion_result, pinned_deployment_id, journal_size FROM sys_invocation ORDER BY created_at',
  );
  t.deepEqual(
    rows.map((r) => [r.id, r.target, r.target_service_ty, r.invoked_by]),
    [
      [ids.greet, 'Durable/greet', 'service', 'ingress'],
      [ids.steps, 'Durable/steps', 'service', 'ingress'],
      [ids.sleeping, 'Durable/steps', 'service', 'ingress'],
    ],
  );
  t.like(rows[0], { status: 'completed', completion_result: 'success' });
  t.like(rows[1], { status: 'completed', completion_result: 'success' });
  t.true(['running', 'suspended'].includes(String(rows[2]!.status)));
  t.is(rows[2]!.completion_result, undefined);
  const [deployment] = await query(t.context, 'SELECT id FROM sys_deployment');
  for (const r of rows) t.is(r.pinned_deployment_id, deployment!.id);
  t.true(Number(rows[1]!.journal_size) >= 9);
});

test('sys_journal holds the journal of a finished invocation, entry by entry', async (t) => {
  const rows = await query(
    t.context,
    `SELECT index, entry_type, name, entry_lite_json FROM sys_journal sj WHERE sj.id = '${t.context.ids.steps}' ORDER BY index`,
  );
  t.deepEqual(
    rows.map((r) => r.index),
    rows.map((_, i) => i),
  );
  t.is(rows[0]!.entry_type, 'Command: Input');
  t.is(rows[rows.length - 1]!.entry_type, 'Command: Output');
  t.deepEqual(
    rows.filter((r) => r.entry_type === 'Command: Run').map((r) => r.name),
    ['a', 'b', 'c'],
  );
  t.is(rows.filter((r) => r.entry_type === 'Notification: Run').length, 3);
  t.true(rows.some((r) => r.entry_type === 'Command: Sleep'));
  t.is(rows.find((r) => r.name === 'a')!.entry_lite_json, '{"Command":{"Run":{"completion_id":1,"name":"a"}}}');
});

test('sys_service and sys_deployment list the registered SDK endpoint', async (t) => {
  const services = await query(
    t.context,
    'SELECT name, revision, public, ty, deployment_id FROM sys_service ORDER BY name',
  );
  const [deployment] = await query(
    t.context,
    'SELECT id, ty, endpoint, services, min_service_protocol_version, max_service_protocol_version FROM sys_deployment',
  );
  t.deepEqual(services, [
    { name: 'Durable', revision: 1, public: true, ty: 'service', deployment_id: deployment!.id },
    { name: 'Suspender', revision: 1, public: true, ty: 'service', deployment_id: deployment!.id },
    { name: 'Tally', revision: 1, public: true, ty: 'virtual_object', deployment_id: deployment!.id },
  ]);
  t.like(deployment, { ty: 'http' });
  t.true(String(deployment!.endpoint).startsWith(t.context.serviceUrl));
  t.deepEqual([...(deployment!.services as string[])].sort(), ['Durable', 'Suspender', 'Tally']);
});

test("the CLI's Arrow count and detail query", async (t) => {
  const res = await t.context.admin.post('v4/query', {
    json: { query: "SELECT COUNT(1) FROM (SELECT * FROM sys_invocation inv LIMIT 50000) WHERE status != 'completed'" },
    headers: { accept: '*/*' },
    responseType: 'buffer',
  });
  t.is(res.statusCode, 200);
  t.is(res.headers['content-type'], 'application/vnd.apache.arrow.stream');
  const table = tableFromIPC(new Uint8Array(res.body));
  t.deepEqual(
    table.schema.fields.map((f) => [f.name, String(f.type)]),
    [['count(Int64(1))', 'Int64']],
  );
  t.is(table.get(0)!.toJSON()['count(Int64(1))'], 1n);

  const [detail] = await query(
    t.context,
    `SELECT inv.id, inv.status, inv.modified_at as state_modified_at, dp.id IS NOT NULL as pinned_deployment_exists
     FROM sys_invocation inv LEFT JOIN sys_deployment dp ON dp.id = inv.pinned_deployment_id
     WHERE inv.id = '${t.context.ids.greet}' AND inv.id in ('${t.context.ids.greet}')`,
  );
  t.like(detail, { id: t.context.ids.greet, status: 'completed', pinned_deployment_exists: true });
  t.regex(String(detail!.state_modified_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
});

test('JSON answers name their columns in order (x-redstate-columns), also those NULL in every row', async (t) => {
  const res = await t.context.admin.post('query', {
    json: { query: 'SELECT target, CAST(NULL AS VARCHAR) AS "no, value", status FROM sys_invocation LIMIT 1' },
    headers: { accept: 'application/json' },
  });
  t.is(res.statusCode, 200);
  t.deepEqual(Object.keys((JSON.parse(res.body) as { rows: Array<Record<string, unknown>> }).rows[0]!), [
    'target',
    'status',
  ]);
  t.deepEqual(String(res.headers['x-redstate-columns']).split(',').map(decodeURIComponent), [
    'target',
    'no, value',
    'status',
  ]);
  const arrow = await t.context.admin.post('query', { json: { query: 'SELECT 1 AS one' } });
  t.is(arrow.headers['x-redstate-columns'], undefined, 'only beside JSON rows');
});
