/**
 * Naming invocations at the ingress (reference-behavior.md §2.4–§2.7): `POST /restate/lookup`,
 * `POST /restate/attach|output` with JSON target bodies (serde's error texts byte for byte),
 * the legacy `/restate/workflow/...` and `/restate/invocation/...` forms, the request size
 * limit, and the automatic idempotency key of calls and sends without one.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { Response } from 'got';
import { sqlRows, stacksPerStore, storeKinds, type Stack } from '../support/stack.js';

const test = anyTest as TestFn<Record<string, Stack>>;

// Every body these tests send is far below 1 KiB, except the ones meant to be too large.
const LIMIT = 1024;
stacksPerStore(test, { serviceFile: 'objects.mjs', env: { REDSTATE_REQUEST_SIZE_LIMIT: String(LIMIT) } });

const EXPIRES = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?\+00:00$/;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** An ingress error as the reference shows it: status, exact body, source header, and whether it names an invocation. */
function expectError(
  t: ExecutionContext,
  res: Response<string>,
  status: number,
  body: string,
  invocationId?: string,
): void {
  t.is(res.statusCode, status, res.body);
  t.is(res.body, body);
  t.is(res.headers['content-type'], 'application/json');
  t.is(res.headers['x-restate-error-source'], JSON.parse(body).source);
  t.is(res.headers['x-restate-id'], invocationId);
}

const ingressError = (code: number, message: string) => JSON.stringify({ code, message, source: 'ingress' });
const NOT_FOUND_OUTPUT = ingressError(404, 'invocation not found');
const NOT_FOUND_ATTACH = '{"code":404,"message":"not found","source":"invocation"}';
const NOT_READY = ingressError(470, 'the invocation exists but has not completed yet');
const METHOD_NOT_ALLOWED = ingressError(405, 'method not allowed');

const post = (stack: Stack, path: string, body: string, headers: Record<string, string> = {}) =>
  stack.ingress.post(path, { body, headers: { 'content-type': 'application/json', ...headers } });

async function lookup(stack: Stack, target: object): Promise<string> {
  const res = await post(stack, 'restate/lookup', JSON.stringify(target));
  if (res.statusCode !== 200) throw new Error(`lookup: ${res.statusCode} ${res.body}`);
  return (JSON.parse(res.body) as { invocationId: string }).invocationId;
}

const query = (stack: Stack, sql: string) => sqlRows(stack.admin, sql);

function expectOutput(t: ExecutionContext, res: Response<string>, body: string, id: string, stored = true): void {
  t.is(res.statusCode, 200, res.body);
  t.is(res.body, body);
  t.is(res.headers['x-restate-id'], id);
  t.is(res.headers['x-restate-error-source'], undefined);
  if (stored) t.regex(String(res.headers['idempotency-expires']), EXPIRES);
  else t.is(res.headers['idempotency-expires'], undefined);
}

for (const store of storeKinds) {
  test(`${store}: malformed target bodies answer 500 with serde's text`, async (t) => {
    const stack = t.context[store]!;
    const lookupCases: Array<[string, string]> = [
      ['', 'EOF while parsing a value at line 1 column 0'],
      ['{}', 'missing field `target` at line 1 column 2'],
      ['{"target":{}}', 'invalid type: map, expected variant identifier at line 1 column 10'],
      ['{"target":{"type":"workflow"}}', 'invalid type: map, expected variant identifier at line 1 column 10'],
      [
        '{"target":"x"}',
        'unknown variant `x`, expected one of `workflow`, `idempotentInvocation`, `invocation` at line 1 column 13',
      ],
      ['{"target":"workflow"}', 'missing field `workflowName`'],
      ['{"target":"workflow","workflowName":"Signup"}', 'missing field `workflowKey`'],
      ['{"target":"idempotentInvocation"}', 'missing field `service`'],
      ['{"target":"idempotentInvocation","service":"Greeter"}', 'missing field `handler`'],
      ['{"target":"idempotentInvocation","service":"Greeter","handler":"greet"}', 'missing field `idempotencyKey`'],
      ['{"target":"invocation"}', 'missing field `invocationId`'],
      ['not json', 'expected ident at line 1 column 2'],
    ];
    for (const [body, reason] of lookupCases) {
      // No content type at all: the ingress does not look at it.
      const res = await stack.ingress.post('restate/lookup', { body });
      expectError(t, res, 500, ingressError(500, `cannot read body: invalid lookup body: ${reason}`));
    }
    // The exact bodies of the transcripts.
    const empty = await stack.ingress.post('restate/lookup');
    t.is(
      empty.body,
      '{"code":500,"message":"cannot read body: invalid lookup body: EOF while parsing a value at line 1 column 0","source":"ingress"}',
    );
    for (const op of ['attach', 'output']) {
      expectError(
        t,
        await post(stack, `restate/${op}`, '{}'),
        500,
        '{"code":500,"message":"cannot read body: invalid request body: missing field `target` at line 1 column 2","source":"ingress"}',
      );
      expectError(
        t,
        await post(stack, `restate/${op}`, 'not json'),
        500,
        '{"code":500,"message":"cannot read body: invalid request body: expected ident at line 1 column 2","source":"ingress"}',
      );
      expectError(
        t,
        await post(stack, `restate/${op}`, '{"target":"invocation","invocationId":"bad"}'),
        400,
        '{"code":400,"message":"bad invocation id \'bad\': bad format","source":"ingress"}',
      );
    }
    expectError(
      t,
      await post(stack, 'restate/lookup', '{"target":"invocation","invocationId":"garbage"}'),
      400,
      '{"code":400,"message":"bad invocation id \'garbage\': bad format","source":"ingress"}',
    );
    // GET on the POST-only forms, POST on the GET-only ones.
    for (const path of ['restate/lookup', 'restate/attach', 'restate/output'])
      expectError(t, await stack.ingress.get(path), 405, METHOD_NOT_ALLOWED);
    expectError(
      t,
      await post(stack, 'restate/attach/inv_1kVTqOP0mI7Y4zp1e76QpoPzHwv1ILotFt', ''),
      405,
      METHOD_NOT_ALLOWED,
    );
    expectError(t, await post(stack, 'restate/workflow/QuickWf/w1/attach', ''), 405, METHOD_NOT_ALLOWED);
    expectError(t, await post(stack, 'restate/invocation/Once/run/ik/output', ''), 405, METHOD_NOT_ALLOWED);
    expectError(t, await stack.ingress.get('restate/workflow/QuickWf/w1/bogus'), 404, ingressError(404, 'not found'));
    expectError(t, await stack.ingress.get('restate/invocation/a/b/output'), 404, ingressError(404, 'not found'));
  });

  test(`${store}: lookup computes ids without looking for the invocation`, async (t) => {
    const stack = t.context[store]!;
    const wf = `${store}-lookup-wf`;
    const run = await post(stack, `restate/call/QuickWf/${wf}/run`, '{}');
    t.is(run.statusCode, 200);
    const res = await post(
      stack,
      'restate/lookup',
      JSON.stringify({ target: 'workflow', workflowName: 'QuickWf', workflowKey: wf }),
    );
    t.is(res.statusCode, 200);
    t.is(res.headers['content-type'], 'application/json');
    t.is(res.headers['x-restate-id'], undefined);
    t.deepEqual(JSON.parse(res.body), { invocationId: run.headers['x-restate-id'] });
    // Unknown workflow ids and names still get an id; the same name gives the same id.
    const unknown = await lookup(stack, { target: 'workflow', workflowName: 'Nope', workflowKey: wf });
    t.regex(unknown, /^inv_1[0-9a-zA-Z]{33}$/);
    t.not(unknown, run.headers['x-restate-id']);
    t.is(await lookup(stack, { target: 'workflow', workflowName: 'Nope', workflowKey: wf }), unknown);
    // An idempotent request's id, for a service and for an object key; `scope` and unknown fields are ignored.
    const ik = `${store}-lookup-ik`;
    const once = await post(stack, 'restate/call/Once/run', JSON.stringify({ tag: ik }), { 'idempotency-key': ik });
    t.is(
      await lookup(stack, {
        target: 'idempotentInvocation',
        service: 'Once',
        handler: 'run',
        idempotencyKey: ik,
        extra: [1, { a: null }],
      }),
      String(once.headers['x-restate-id']),
    );
    const add = await post(stack, `restate/call/Counter/${store}-k3/add`, '{"delta":7}', { 'idempotency-key': ik });
    t.is(add.statusCode, 200);
    const addId = String(add.headers['x-restate-id']);
    t.is(
      await lookup(stack, {
        target: 'idempotentInvocation',
        service: 'Counter',
        key: `${store}-k3`,
        handler: 'add',
        idempotencyKey: ik,
      }),
      addId,
    );
    // Without the key an object's request gets some other id, as in Restate (no failure).
    t.not(
      await lookup(stack, {
        target: 'idempotentInvocation',
        service: 'Counter',
        handler: 'add',
        idempotencyKey: ik,
        serviceKey: `${store}-k3`,
      }),
      addId,
    );
    // An id is echoed, whether it exists or not.
    const someId = 'inv_1kVTqOP0mI7Y4zp1e76QpoPzHwv1ILotFt';
    t.is(await lookup(stack, { target: 'invocation', invocationId: someId }), someId);
  });

  test(`${store}: POST attach and output by target body`, async (t) => {
    const stack = t.context[store]!;
    const tag = `${store}-targets`;
    const call = await post(stack, 'restate/call/Once/run', JSON.stringify({ tag }));
    t.is(call.statusCode, 200);
    const id = String(call.headers['x-restate-id']);
    const byId = JSON.stringify({ target: 'invocation', invocationId: id });
    for (const op of ['attach', 'output']) {
      // A plain call stays readable after it completed (its journal retention).
      expectOutput(t, await post(stack, `restate/${op}`, byId), `"${tag}:1"`, id);
      // Any content type, or none; unknown fields ignored.
      expectOutput(
        t,
        await stack.ingress.post(`restate/${op}`, { body: byId, headers: { 'content-type': 'text/plain' } }),
        `"${tag}:1"`,
        id,
      );
      expectOutput(
        t,
        await stack.ingress.post(`restate/${op}`, { body: byId.replace('}', ',"extra":1}') }),
        `"${tag}:1"`,
        id,
      );
    }

    // Workflow targets.
    const wf = `${store}-target-wf`;
    const run = await post(stack, `restate/call/QuickWf/${wf}/run`, '{}');
    const wfBody = (key: string, name = 'QuickWf') =>
      JSON.stringify({ target: 'workflow', workflowName: name, workflowKey: key });
    for (const op of ['attach', 'output'])
      expectOutput(
        t,
        await post(stack, `restate/${op}`, wfBody(wf)),
        `"wf ${wf} 1"`,
        String(run.headers['x-restate-id']),
      );
    expectError(t, await post(stack, 'restate/output', wfBody(`${wf}-nope`)), 404, NOT_FOUND_OUTPUT);
    const unknownId = await lookup(stack, { target: 'workflow', workflowName: 'QuickWf', workflowKey: `${wf}-nope` });
    expectError(t, await post(stack, 'restate/attach', wfBody(`${wf}-nope`)), 404, NOT_FOUND_ATTACH, unknownId);
    // Not a workflow, or no such service: nothing has that id.
    expectError(t, await post(stack, 'restate/output', wfBody('k1', 'Counter')), 404, NOT_FOUND_OUTPUT);
    expectError(t, await post(stack, 'restate/output', wfBody(wf, 'Nope')), 404, NOT_FOUND_OUTPUT);

    // Idempotent-invocation targets.
    const ik = `${store}-target-ik`;
    const idem = await post(stack, `restate/call/Counter/${store}-tk/add`, '{"delta":7}', { 'idempotency-key': ik });
    const ikBody = (key: string) =>
      JSON.stringify({
        target: 'idempotentInvocation',
        service: 'Counter',
        key: `${store}-tk`,
        handler: 'add',
        idempotencyKey: key,
      });
    for (const op of ['attach', 'output'])
      expectOutput(t, await post(stack, `restate/${op}`, ikBody(ik)), '7', String(idem.headers['x-restate-id']));
    expectError(t, await post(stack, 'restate/output', ikBody('nope')), 404, NOT_FOUND_OUTPUT);
    const nopeId = await lookup(stack, {
      target: 'idempotentInvocation',
      service: 'Counter',
      key: `${store}-tk`,
      handler: 'add',
      idempotencyKey: 'nope',
    });
    expectError(t, await post(stack, 'restate/attach', ikBody('nope')), 404, NOT_FOUND_ATTACH, nopeId);

    // Running: output is not ready, attach waits and then has no idempotency-expires.
    const slowTag = `${store}-targets-slow`;
    const sent = await post(stack, 'restate/send/Once/run', JSON.stringify({ tag: slowTag, sleepMs: 1500 }));
    const slowId = (JSON.parse(sent.body) as { invocationId: string }).invocationId;
    const slowBody = JSON.stringify({ target: 'invocation', invocationId: slowId });
    expectError(t, await post(stack, 'restate/output', slowBody), 470, NOT_READY);
    expectOutput(t, await post(stack, 'restate/attach', slowBody), `"${slowTag}:1"`, slowId, false);
    expectOutput(t, await post(stack, 'restate/output', slowBody), `"${slowTag}:1"`, slowId);
  });

  test(`${store}: legacy workflow and idempotency-key paths`, async (t) => {
    const stack = t.context[store]!;
    const wf = `${store}-legacy-wf`;
    const sent = await post(stack, `restate/send/QuickWf/${wf}/run`, '{"sleepMs":1500}');
    t.is(sent.statusCode, 202);
    const runId = (JSON.parse(sent.body) as { invocationId: string }).invocationId;
    expectError(t, await stack.ingress.get(`restate/workflow/QuickWf/${wf}/output`), 470, NOT_READY);
    expectOutput(t, await stack.ingress.get(`restate/workflow/QuickWf/${wf}/attach`), `"wf ${wf} 1"`, runId, false);
    expectOutput(t, await stack.ingress.get(`restate/workflow/QuickWf/${wf}/output`), `"wf ${wf} 1"`, runId);
    expectOutput(t, await stack.ingress.get(`restate/workflow/QuickWf/${wf}/attach`), `"wf ${wf} 1"`, runId);
    // Keys are URL-decoded.
    const odd = `${store} a/b`;
    const oddRun = await post(stack, `restate/call/QuickWf/${encodeURIComponent(odd)}/run`, '{}');
    expectOutput(
      t,
      await stack.ingress.get(`restate/workflow/QuickWf/${encodeURIComponent(odd)}/output`),
      `"wf ${odd} 1"`,
      String(oddRun.headers['x-restate-id']),
    );
    // Unknown ids, names, and services that are no workflow.
    expectError(t, await stack.ingress.get(`restate/workflow/QuickWf/${wf}-nope/output`), 404, NOT_FOUND_OUTPUT);
    const computed = await lookup(stack, { target: 'workflow', workflowName: 'QuickWf', workflowKey: `${wf}-nope` });
    expectError(
      t,
      await stack.ingress.get(`restate/workflow/QuickWf/${wf}-nope/attach`),
      404,
      NOT_FOUND_ATTACH,
      computed,
    );
    expectError(t, await stack.ingress.get('restate/workflow/Nope/w1/output'), 404, NOT_FOUND_OUTPUT);
    expectError(t, await stack.ingress.get('restate/workflow/Counter/k1/output'), 404, NOT_FOUND_OUTPUT);

    // /restate/invocation/{svc}/[{key}/]{handler}/{idempotencyKey}/attach|output
    const ik = `${store}-legacy-ik`;
    const tag = `${store}-legacy`;
    const idem = await post(stack, 'restate/send/Once/run', JSON.stringify({ tag, sleepMs: 1000 }), {
      'idempotency-key': ik,
    });
    const idemId = (JSON.parse(idem.body) as { invocationId: string }).invocationId;
    expectError(t, await stack.ingress.get(`restate/invocation/Once/run/${ik}/output`), 470, NOT_READY);
    expectOutput(t, await stack.ingress.get(`restate/invocation/Once/run/${ik}/attach`), `"${tag}:1"`, idemId, false);
    expectOutput(t, await stack.ingress.get(`restate/invocation/Once/run/${ik}/output`), `"${tag}:1"`, idemId);
    const vo = await post(stack, `restate/call/Counter/${store}-lk/add`, '{"delta":3}', { 'idempotency-key': ik });
    for (const op of ['attach', 'output'])
      expectOutput(
        t,
        await stack.ingress.get(`restate/invocation/Counter/${store}-lk/add/${ik}/${op}`),
        '3',
        String(vo.headers['x-restate-id']),
      );
    expectError(t, await stack.ingress.get('restate/invocation/Once/run/nope/output'), 404, NOT_FOUND_OUTPUT);
    const nopeId = await lookup(stack, {
      target: 'idempotentInvocation',
      service: 'Once',
      handler: 'run',
      idempotencyKey: 'nope',
    });
    expectError(t, await stack.ingress.get('restate/invocation/Once/run/nope/attach'), 404, NOT_FOUND_ATTACH, nopeId);
    // ... and by id.
    for (const op of ['attach', 'output'])
      expectOutput(t, await stack.ingress.get(`restate/invocation/${idemId}/${op}`), `"${tag}:1"`, idemId);
    expectError(
      t,
      await stack.ingress.get('restate/invocation/not-an-id/output'),
      400,
      ingressError(400, "bad invocation id 'not-an-id': bad format"),
    );
  });

  test(`${store}: bodies over the request size limit get 413, and the server goes on`, async (t) => {
    const stack = t.context[store]!;
    const big = JSON.stringify({ tag: 'x'.repeat(2 * LIMIT) });
    for (const path of [
      'restate/call/Once/run',
      'restate/send/Once/run',
      'restate/lookup',
      'restate/attach',
      'Once/run',
    ]) {
      const res = await post(stack, path, big);
      t.is(res.statusCode, 413, path);
      t.is(res.headers['content-type'], 'application/json');
      t.is(res.headers['x-restate-error-source'], 'ingress');
      t.like(JSON.parse(res.body), { code: 413, source: 'ingress' });
    }
    // Streamed without a length: cut off when it passes the limit, still answered.
    const chunked = await stack.ingress.post('restate/call/Once/run', {
      body: (async function* () {
        for (let i = 0; i < 8; i++) yield Buffer.from('x'.repeat(300));
      })(),
      headers: { 'content-type': 'application/json' },
    });
    t.is(chunked.statusCode, 413);
    t.like(JSON.parse(chunked.body), { code: 413, source: 'ingress' });
    // Exactly at the limit is fine, and the server still serves.
    const tag = `${store}-limit`;
    const atLimit = JSON.stringify({ tag, pad: '' });
    const exact = atLimit.replace('""', `"${'p'.repeat(LIMIT - atLimit.length)}"`);
    t.is(Buffer.byteLength(exact), LIMIT);
    const ok = await post(stack, 'restate/call/Once/run', exact);
    t.is(ok.statusCode, 200, ok.body);
    t.is(ok.body, `"${tag}:1"`);
  });

  test(`${store}: calls and sends without a key get a ULID idempotency key that deduplicates nothing`, async (t) => {
    const stack = t.context[store]!;
    const tag = `${store}-auto`;
    const first = await post(stack, 'restate/call/Once/run', JSON.stringify({ tag }));
    const second = await post(stack, 'restate/call/Once/run', JSON.stringify({ tag }));
    t.is(first.body, `"${tag}:1"`);
    t.is(second.body, `"${tag}:2"`);
    const sent = await post(stack, `restate/send/Counter/${store}-auto/add`, '{"delta":1}');
    const sentId = (JSON.parse(sent.body) as { invocationId: string }).invocationId;
    const wf = await post(stack, `restate/call/QuickWf/${store}-auto/run`, '{}');
    const shared = await post(stack, `restate/call/QuickWf/${store}-auto/info`, '');
    const explicit = await post(stack, 'restate/call/Once/run', JSON.stringify({ tag: `${tag}-k` }), {
      'idempotency-key': `${store}-given`,
    });
    const ids = [first, second, wf, shared, explicit].map((r) => String(r.headers['x-restate-id']));
    await stack.ingress.get(`restate/attach/${sentId}`);
    const rows = await query(
      stack,
      `SELECT id, idempotency_key, invoked_by FROM sys_invocation WHERE id IN (${[...ids, sentId].map((i) => `'${i}'`).join(', ')})`,
    );
    const keyOf = (id: string) => rows.find((r) => r.id === id)?.idempotency_key;
    t.regex(String(keyOf(ids[0]!)), ULID);
    t.regex(String(keyOf(ids[1]!)), ULID);
    t.not(keyOf(ids[0]!), keyOf(ids[1]!));
    t.regex(String(keyOf(sentId)), ULID);
    // Workflows (run and shared handlers) get none; a client's key is kept as given.
    t.is(keyOf(ids[2]!), undefined);
    t.is(keyOf(ids[3]!), undefined);
    t.is(keyOf(ids[4]!), `${store}-given`);
    t.is(rows.length, 6);
  });
}
