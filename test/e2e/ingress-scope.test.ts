/**
 * Scoped calls and sends at the ingress (reference-behavior.md §2.9): every validation answer
 * byte for byte, with and without vqueues, and what a scope changes (ids of workflows and
 * idempotent requests, lookups by target body, the columns of sys_invocation). The store does
 * not matter here: the embedded one only.
 */
import anyTest, { type TestFn } from 'ava';
import { sqlRows, startStack, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<{ on: Stack; off: Stack; objects: Stack }>;

const VQUEUES = { REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES: 'true' };
test.before(async (t) => {
  const [on, off, objects] = await Promise.all([
    startStack('embedded', { serviceFile: 'flow.mjs', env: VQUEUES }),
    startStack('embedded', { serviceFile: 'flow.mjs' }),
    startStack('embedded', {
      serviceFile: 'flow.mjs',
      env: { ...VQUEUES, REDSTATE_EXPERIMENTAL_ENABLE_SCOPED_VIRTUAL_OBJECTS: 'true' },
    }),
  ]);
  t.context = { on: on!, off: off!, objects: objects! };
});
test.after.always(async (t) => {
  await Promise.all([t.context.on?.stop(), t.context.off?.stop(), t.context.objects?.stop()]);
});

const BAD_PATH =
  'bad path, expected /restate/call/:service/:handler, /restate/send/:service/:handler, /restate/scope/:scope/call/:service/:handler, /restate/attach/:invocation_id, /restate/output/:invocation_id, or /restate/lookup';
const work = JSON.stringify({ tag: 'x', ms: 0 });

interface Case {
  path: string;
  headers?: Record<string, string>;
  body?: string;
  status: number;
  message?: string;
}

const rejected: Case[] = [
  { path: 'restate/scope//call/Flow/work', status: 400, message: 'bad scope value: value cannot be empty' },
  {
    path: 'restate/scope/a%2Fb/call/Flow/work',
    status: 400,
    message: 'bad scope value: value contains characters outside the allowed set [a-zA-Z0-9_.-]',
  },
  {
    path: `restate/scope/${'s'.repeat(37)}/call/Flow/work`,
    status: 400,
    message: 'bad scope value: value too long: 37 bytes (max 36)',
  },
  {
    path: `restate/scope/${'s'.repeat(300)}/call/Flow/work`,
    status: 400,
    message: 'bad scope value: value too long: 300 bytes (max 36)',
  },
  { path: 'restate/scope/sc1/bogus/Flow/work', status: 400, message: BAD_PATH },
  { path: 'restate/scope/sc1/call/Flow', status: 400, message: BAD_PATH },
  {
    path: 'restate/scope/sc1/call/Nope/greet',
    status: 404,
    message: "service 'Nope' not found, make sure to register the service before calling it.",
  },
  {
    path: 'restate/scope/sc1/call/Flow/work?delay=1s',
    status: 400,
    message: 'cannot use the delay query parameter with calls. The delay is supported only with sends',
  },
  {
    path: 'restate/scope/sc1/call/FlowObj/k1/add',
    body: '1',
    status: 400,
    message: 'scope is not supported for Virtual Object targets',
  },
  {
    path: 'restate/scope/sc1/call/Flow/work',
    headers: { 'x-restate-limit-key': 'a/b/c' },
    status: 400,
    message: 'invalid limit-key: too many path components in the given limit-key (max 2)',
  },
  {
    path: 'restate/scope/sc1/call/Flow/work',
    headers: { 'x-restate-limit-key': 'a b' },
    status: 400,
    message:
      'invalid limit-key: invalid limit-key component: value contains characters outside the allowed set [a-zA-Z0-9_.-]',
  },
  {
    path: 'restate/scope/sc1/call/Flow/work',
    headers: { 'x-restate-limit-key': 'l'.repeat(37) },
    status: 400,
    message: 'invalid limit-key: invalid limit-key component: value too long: 37 bytes (max 36)',
  },
  {
    path: 'restate/call/Flow/work',
    headers: { 'x-restate-limit-key': 'lk1' },
    status: 400,
    message: 'limit-key requires a scope to be set',
  },
  { path: 'restate/call/Flow/work?limit-key=lk1', status: 400, message: 'limit-key requires a scope to be set' },
];

async function post(stack: Stack, c: Pick<Case, 'path' | 'headers' | 'body'>) {
  return stack.ingress.post(c.path, {
    body: c.body ?? work,
    headers: { 'content-type': 'application/json', ...c.headers },
  });
}

test('with vqueues, every rejected scope and limit key answers as the reference', async (t) => {
  for (const c of rejected) {
    const res = await post(t.context.on, c);
    t.is(res.statusCode, c.status, c.path);
    t.is(res.body, JSON.stringify({ code: c.status, message: c.message, source: 'ingress' }), c.path);
    t.is(res.headers['x-restate-error-source'], 'ingress', c.path);
  }
});

test('without vqueues, a scope or a limit key is refused', async (t) => {
  const cases: Case[] = [
    {
      path: 'restate/scope/sc1/call/Flow/work',
      status: 400,
      message: 'scoped invocations require vqueues to be enabled',
    },
    {
      path: 'restate/scope/sc1/call/Nope/greet',
      status: 400,
      message: 'scoped invocations require vqueues to be enabled',
    },
    { path: 'restate/scope//bogus', status: 400, message: 'scoped invocations require vqueues to be enabled' },
    {
      path: 'restate/call/Flow/work',
      headers: { 'x-restate-limit-key': 'lk1' },
      status: 400,
      message: 'limit-key requires a scope to be set',
    },
    { path: 'restate/call/Flow/work?limit-key=lk1', status: 400, message: 'limit-key requires a scope to be set' },
  ];
  for (const c of cases) {
    const res = await post(t.context.off, c);
    t.is(res.statusCode, c.status, c.path);
    t.is(res.body, JSON.stringify({ code: c.status, message: c.message, source: 'ingress' }), c.path);
  }
});

test('accepted limit keys and scopes, as stored in sys_invocation', async (t) => {
  const stack = t.context.on;
  const accepted: Array<Case & { limitKey: string | null; scope?: string }> = [
    {
      path: 'restate/scope/sc1/call/Flow/work',
      headers: { 'x-restate-limit-key': 'a/b' },
      status: 200,
      limitKey: 'a/b',
    },
    { path: 'restate/scope/sc1/call/Flow/work', headers: { 'x-restate-limit-key': 'a/' }, status: 200, limitKey: 'a' },
    { path: 'restate/scope/sc1/call/Flow/work', headers: { 'x-restate-limit-key': '' }, status: 200, limitKey: null },
    { path: 'restate/scope/sc1/call/Flow/work?limit-key=', status: 200, limitKey: null },
    { path: 'restate/scope/sc1/call/Flow/work?limit-key=lk2', status: 200, limitKey: 'lk2' },
    {
      path: 'restate/scope/sc1/call/Flow/work?limit-key=q',
      headers: { 'x-restate-limit-key': 'h' },
      status: 200,
      limitKey: 'h',
    },
    {
      path: 'restate/scope/sc1/call/Flow/work',
      headers: { 'x-restate-limit-key': 'l'.repeat(36) },
      status: 200,
      limitKey: 'l'.repeat(36),
    },
    { path: `restate/scope/${'s'.repeat(36)}/call/Flow/work`, status: 200, limitKey: null, scope: 's'.repeat(36) },
  ];
  for (const c of accepted) {
    const res = await post(stack, c);
    t.is(res.statusCode, 200, `${c.path} ${res.body}`);
    const id = String(res.headers['x-restate-id']);
    const [row] = await sqlRows(
      stack.admin,
      `select scope, limit_key, vqueue_id from sys_invocation where id = '${id}'`,
    );
    t.is(row!['scope'], c.scope ?? 'sc1', c.path);
    t.is(row!['limit_key'] ?? null, c.limitKey, c.path);
    t.regex(String(row!['vqueue_id']), /^vq_1[0-9a-zA-Z]{33}$/);
  }
  const delayed = await stack.ingress.post('restate/scope/sc1/send/Flow/work?delay=1s', {
    body: work,
    headers: { 'content-type': 'application/json' },
  });
  t.is(delayed.statusCode, 202);
  t.regex(delayed.body, /^\{"invocationId":"inv_1\w+","executionTime":"[^"]+","status":"Accepted"\}$/);
  const done = await stack.ingress.get(
    `restate/attach/${(JSON.parse(delayed.body) as { invocationId: string }).invocationId}`,
  );
  t.is(done.body, '"x"');
});

test('a workflow id and an idempotency key are one per scope; target bodies name them with `scope`', async (t) => {
  const stack = t.context.on;
  const lookup = async (body: object) =>
    (JSON.parse((await stack.ingress.post('restate/lookup', { json: body })).body) as { invocationId: string })
      .invocationId;
  const scoped = await post(stack, { path: 'restate/scope/sc1/call/FlowWf/w1/run', body: '"s"' });
  t.is(scoped.statusCode, 200);
  t.is(scoped.body, '"run s"');
  const again = await post(stack, { path: 'restate/scope/sc1/call/FlowWf/w1/run', body: '"s"' });
  t.is(again.statusCode, 409);
  t.is(again.body, '{"code":409,"message":"the workflow method was already invoked","source":"invocation"}');
  const unscoped = await post(stack, { path: 'restate/call/FlowWf/w1/run', body: '"u"' });
  t.is(unscoped.body, '"run u"');
  t.not(unscoped.headers['x-restate-id'], scoped.headers['x-restate-id']);
  t.is(
    await lookup({ target: 'workflow', workflowName: 'FlowWf', workflowKey: 'w1', scope: 'sc1' }),
    String(scoped.headers['x-restate-id']),
  );
  t.is(
    await lookup({ target: 'workflow', workflowName: 'FlowWf', workflowKey: 'w1' }),
    String(unscoped.headers['x-restate-id']),
  );
  const output = await stack.ingress.post('restate/output', {
    json: { target: 'workflow', workflowName: 'FlowWf', workflowKey: 'w1', scope: 'sc1' },
  });
  t.is(output.body, '"run s"');

  const idem = { 'idempotency-key': 'sk1' };
  const first = await post(stack, { path: 'restate/scope/sc1/call/Flow/work', headers: idem });
  const second = await post(stack, { path: 'restate/scope/sc1/call/Flow/work', headers: idem });
  t.is(second.headers['x-restate-id'], first.headers['x-restate-id']);
  const plain = await post(stack, { path: 'restate/call/Flow/work', headers: idem });
  t.not(plain.headers['x-restate-id'], first.headers['x-restate-id']);
  t.is(
    await lookup({
      target: 'idempotentInvocation',
      service: 'Flow',
      handler: 'work',
      idempotencyKey: 'sk1',
      scope: 'sc1',
    }),
    String(first.headers['x-restate-id']),
  );
  t.is(
    await lookup({ target: 'idempotentInvocation', service: 'Flow', handler: 'work', idempotencyKey: 'sk1' }),
    String(plain.headers['x-restate-id']),
  );
});

test('with scoped virtual objects, state and lock are per (scope, key); admin state takes a scope', async (t) => {
  const stack = t.context.objects;
  const add = async (path: string, n: number) => {
    const res = await post(stack, { path, body: String(n) });
    t.is(res.statusCode, 200, res.body);
    return res.body;
  };
  t.is(await add('restate/scope/sc1/call/FlowObj/k1/add', 5), '5');
  t.is(await add('restate/scope/sc2/call/FlowObj/k1/add', 7), '7');
  t.is(await add('restate/call/FlowObj/k1/add', 1), '1');
  t.is(await add('restate/scope/sc1/call/FlowObj/k1/add', 0), '5');
  const rows = await sqlRows(
    stack.admin,
    "select scope, service_key, value_utf8 from state where service_name = 'FlowObj' order by scope nulls first",
  );
  t.deepEqual(rows, [
    { service_key: 'k1', value_utf8: '1' },
    { scope: 'sc1', service_key: 'k1', value_utf8: '5' },
    { scope: 'sc2', service_key: 'k1', value_utf8: '7' },
  ]);
  const set = await stack.admin.post('services/FlowObj/state', {
    json: { object_key: 'k1', scope: 'sc2', new_state: { count: [...Buffer.from('99')] } },
  });
  t.is(set.statusCode, 202, set.body);
  t.is(await add('restate/scope/sc2/call/FlowObj/k1/add', 0), '99');
  t.is(await add('restate/call/FlowObj/k1/add', 0), '1');
  // Without the feature too, as in the reference: a separate, scoped row.
  const plain = t.context.off;
  t.is(
    (
      await plain.admin.post('services/FlowObj/state', {
        json: { object_key: 'k1', scope: 's1', new_state: { count: [...Buffer.from('3')] } },
      })
    ).statusCode,
    202,
  );
  await waitFor(
    async () =>
      (await sqlRows(plain.admin, "select scope, value_utf8 from state where service_name = 'FlowObj'")).length === 1,
    5000,
  );
  t.deepEqual(await sqlRows(plain.admin, "select scope, value_utf8 from state where service_name = 'FlowObj'"), [
    { scope: 's1', value_utf8: '3' },
  ]);
  const meta = JSON.parse((await stack.admin.get('version')).body) as { features: Record<string, boolean> };
  t.like(meta.features, { vqueues: true, scoped_virtual_objects: true });
});
