/**
 * Durable invocations of plain services through the ingress, against the server process, a
 * real SDK service and both stores; answers compared with reference-behavior.md §2.
 */
import anyTest, { type TestFn } from 'ava';
import { stacksPerStore, storeKinds, type Stack } from '../support/stack.js';

const test = anyTest as TestFn<Record<string, Stack>>;

stacksPerStore(test);

const json = { 'content-type': 'application/json' };

for (const store of storeKinds) {
  test(`${store}: call answers the handler's output with x-restate-id`, async (t) => {
    const res = await t.context[store]!.ingress.post('restate/call/Durable/greet', { headers: json, body: '"Ada"' });
    t.is(res.statusCode, 200);
    t.is(res.body, '"hi Ada"');
    t.is(res.headers['content-type'], 'application/json');
    t.regex(String(res.headers['x-restate-id']), /^inv_1[0-9a-zA-Z]{33}$/);
    t.is(res.headers['x-restate-error-source'], undefined);
  });

  test(`${store}: legacy call path and GET work like POST`, async (t) => {
    const { ingress } = t.context[store]!;
    const legacy = await ingress.post('Durable/greet', { headers: json, body: '"Bo"' });
    t.is(legacy.statusCode, 200);
    t.is(legacy.body, '"hi Bo"');
    const get = await ingress.get('restate/call/Durable/noInput');
    t.is(get.statusCode, 200);
    t.is(get.body, '"no input"');
  });

  test(`${store}: send is accepted, then attach and output give the result`, async (t) => {
    const { ingress } = t.context[store]!;
    const sent = await ingress.post('restate/send/Durable/greet', { headers: json, body: '"Cy"' });
    t.is(sent.statusCode, 202);
    const body = JSON.parse(sent.body) as { invocationId: string; status: string };
    t.deepEqual(Object.keys(body), ['invocationId', 'status']);
    t.is(body.status, 'Accepted');
    t.is(sent.headers['x-restate-id'], body.invocationId);
    const attached = await ingress.get(`restate/attach/${body.invocationId}`);
    t.is(attached.statusCode, 200);
    t.is(attached.body, '"hi Cy"');
    const output = await ingress.get(`restate/invocation/${body.invocationId}/output`);
    t.is(output.statusCode, 200);
    t.is(output.body, '"hi Cy"');
    t.is(output.headers['x-restate-id'], body.invocationId);
    t.regex(String(output.headers['idempotency-expires']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?\+00:00$/);
  });

  test(`${store}: delayed send is scheduled, not ready, then runs`, async (t) => {
    const { ingress } = t.context[store]!;
    const before = Date.now();
    const sent = await ingress.post('restate/send/Durable/greet?delay=1s', { headers: json, body: '"Di"' });
    t.is(sent.statusCode, 202);
    const body = JSON.parse(sent.body) as { invocationId: string; executionTime: string; status: string };
    t.deepEqual(Object.keys(body), ['invocationId', 'executionTime', 'status']);
    t.regex(body.executionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    const notReady = await ingress.get(`restate/output/${body.invocationId}`);
    t.is(notReady.statusCode, 470);
    t.is(notReady.body, '{"code":470,"message":"the invocation exists but has not completed yet","source":"ingress"}');
    t.is(notReady.headers['x-restate-error-source'], 'ingress');
    const attached = await ingress.get(`restate/attach/${body.invocationId}`);
    t.is(attached.statusCode, 200);
    t.true(Date.now() - before >= 1000);
  });

  test(`${store}: delays in both forms, bad ones rejected`, async (t) => {
    const { ingress } = t.context[store]!;
    const iso = await ingress.post('restate/send/Durable/greet?delay=PT0.1S', { headers: json, body: '"x"' });
    t.is(iso.statusCode, 202);
    const bad = await ingress.post('restate/send/Durable/greet?delay=bogus', { headers: json, body: '"x"' });
    t.is(bad.statusCode, 400);
    t.regex(
      bad.body,
      /^\{"code":400,"message":"bad delay query parameter, must be a ISO8601 duration: .*","source":"ingress"\}$/,
    );
    const onCall = await ingress.post('restate/call/Durable/greet?delay=1s', { headers: json, body: '"x"' });
    t.is(onCall.statusCode, 400);
    t.is(
      onCall.body,
      '{"code":400,"message":"cannot use the delay query parameter with calls. The delay is supported only with sends","source":"ingress"}',
    );
  });

  test(`${store}: ctx.run steps and a durable sleep`, async (t) => {
    const { ingress, counts } = t.context[store]!;
    const res = await ingress.post('restate/call/Durable/steps', { json: { tag: `${store}-steps`, sleepMs: 200 } });
    t.is(res.statusCode, 200);
    t.is(res.body, `"${store}-steps:111"`);
    const c = await counts();
    t.is(c[`${store}-steps:a`], 1);
    t.is(c[`${store}-steps:done`], 1);
  });

  test(`${store}: terminal errors carry code, message and metadata`, async (t) => {
    const { ingress } = t.context[store]!;
    const res = await ingress.post('restate/call/Durable/fail', { headers: json, body: '' });
    t.is(res.statusCode, 418);
    t.is(res.body, '{"code":418,"message":"terminal boom","metadata":{"why":"test"},"source":"invocation"}');
    t.is(res.headers['x-restate-error-source'], 'invocation');
    t.regex(String(res.headers['x-restate-id']), /^inv_/);
    const plain = await ingress.post('restate/call/Durable/failDefault');
    t.is(plain.statusCode, 500);
    t.is(plain.body, '{"code":500,"message":"terminal default code","source":"invocation"}');
  });

  test(`${store}: retryable failures are retried until success`, async (t) => {
    const res = await t.context[store]!.ingress.post('restate/call/Durable/flaky', {
      json: { tag: `${store}-flaky`, times: 2 },
    });
    t.is(res.statusCode, 200);
    t.is(res.body, '"ok after 3"');
  });

  test(`${store}: retries exhausted with onMaxAttempts kill fail the call with the last error`, async (t) => {
    const res = await t.context[store]!.ingress.post('restate/call/Durable/alwaysFailKill');
    t.is(res.statusCode, 500);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    t.deepEqual(Object.keys(body), ['code', 'message', 'stacktrace', 'source']);
    t.is(body['message'], 'always fails (kill)');
    t.is(body['source'], 'invocation');
  });

  test(`${store}: binary input and output`, async (t) => {
    const res = await t.context[store]!.ingress.post('restate/call/Durable/bytes', {
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from([1, 2, 3, 0, 255]),
      responseType: 'buffer',
    });
    t.is(res.statusCode, 200);
    t.deepEqual([...res.body], [255, 0, 3, 2, 1]);
  });

  test(`${store}: routing and input errors answer as the reference`, async (t) => {
    const { ingress } = t.context[store]!;
    const cases: Array<[string, () => Promise<{ statusCode: number; body: string }>, number, string]> = [
      [
        'unknown service',
        () => ingress.post('restate/call/Nope/greet'),
        404,
        '{"code":404,"message":"service \'Nope\' not found, make sure to register the service before calling it.","source":"ingress"}',
      ],
      [
        'unknown handler',
        () => ingress.post('restate/call/Durable/nope'),
        404,
        '{"code":404,"message":"the service \'Durable\' exists, but the handler \'nope\' was not found, check that the handler exists in the latest registered service version.","source":"ingress"}',
      ],
      [
        'key on a service',
        () => ingress.post('restate/call/Durable/k/greet'),
        400,
        /bad path, expected \/restate\/call/.source,
      ],
      ['too few segments', () => ingress.post('restate/call/Durable'), 400, /bad path, expected/.source],
      [
        'wrong content type',
        () => ingress.post('restate/call/Durable/greet', { headers: { 'content-type': 'text/plain' }, body: 'x' }),
        400,
        '{"code":400,"message":"input validation error: Content-type \'text/plain\' does not match \'application/json\'","source":"ingress"}',
      ],
      [
        'empty content type',
        () => ingress.post('restate/call/Durable/greet', { headers: { 'content-type': '' }, body: '"x"' }),
        400,
        '{"code":400,"message":"input validation error: Empty content-type","source":"ingress"}',
      ],
      [
        'wrong method',
        () => ingress.put('restate/call/Durable/greet'),
        405,
        '{"code":405,"message":"method not allowed","source":"ingress"}',
      ],
      [
        'unknown resource',
        () => ingress.get('restate/foo/bar'),
        404,
        '{"code":404,"message":"not found","source":"ingress"}',
      ],
      ['root', () => ingress.get(''), 400, '{"code":400,"message":"bad path: /","source":"ingress"}'],
      [
        'malformed id',
        () => ingress.get('restate/output/not-an-id'),
        400,
        '{"code":400,"message":"bad invocation id \'not-an-id\': bad format","source":"ingress"}',
      ],
      [
        'short id',
        () => ingress.get('restate/attach/inv_123'),
        400,
        '{"code":400,"message":"bad invocation id \'inv_123\': bad length","source":"ingress"}',
      ],
      [
        'unknown id output',
        () => ingress.get('restate/output/inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi'),
        404,
        '{"code":404,"message":"invocation not found","source":"ingress"}',
      ],
      [
        'unknown id attach',
        () => ingress.get('restate/attach/inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi'),
        404,
        '{"code":404,"message":"not found","source":"invocation"}',
      ],
      [
        'POST on attach',
        () => ingress.post('restate/attach/inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi'),
        405,
        '{"code":405,"message":"method not allowed","source":"ingress"}',
      ],
    ];
    for (const [name, send, status, body] of cases) {
      const res = await send();
      t.is(res.statusCode, status, name);
      if (body.startsWith('{')) t.is(res.body, body, name);
      else t.regex(res.body, new RegExp(body), name);
    }
  });

  test(`${store}: bad JSON is rejected by the SDK as an invocation failure`, async (t) => {
    const res = await t.context[store]!.ingress.post('restate/call/Durable/greet', { headers: json, body: '{bad' });
    t.is(res.statusCode, 400);
    t.is(res.headers['x-restate-error-source'], 'invocation');
    t.regex(String(res.headers['x-restate-id']), /^inv_/);
    t.regex(res.body, /^\{"code":400,"message":"Failed to deserialize input: .*","source":"invocation"\}$/);
  });

  test(`${store}: health lists the registered services`, async (t) => {
    const res = await t.context[store]!.ingress.get('restate/health');
    t.is(res.statusCode, 200);
    t.deepEqual((JSON.parse(res.body) as { services: string[] }).services.sort(), ['Durable', 'Suspender', 'Tally']);
  });
}

for (const store of storeKinds) {
  test(`${store}: CORS headers and the OPTIONS preflight as the reference answers them`, async (t) => {
    const { ingress } = t.context[store]!;
    const res = await ingress.post('restate/call/Durable/greet', {
      headers: { ...json, origin: 'http://app.example' },
      body: '"o"',
    });
    t.is(res.headers['access-control-allow-origin'], 'http://app.example');
    t.is(res.headers['access-control-allow-credentials'], 'true');
    t.is(res.headers['vary'], 'origin, access-control-request-method, access-control-request-headers');
    const pre = await ingress('restate/call/Durable/greet', {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-custom',
      },
    });
    t.is(pre.statusCode, 200);
    t.is(pre.body, '');
    t.is(pre.headers['access-control-allow-methods'], 'POST');
    t.is(pre.headers['access-control-allow-headers'], 'content-type,x-custom');
  });

  test(`${store}: a private handler is refused at the ingress and callable from a handler`, async (t) => {
    const { ingress } = t.context[store]!;
    const direct = await ingress.post('restate/call/Durable/secret');
    t.is(direct.statusCode, 400);
    t.is(direct.body, '{"code":400,"message":"the invoked service is not public","source":"ingress"}');
    const viaHandler = await ingress.post('restate/call/Durable/callSecret');
    t.is(viaHandler.statusCode, 200);
    t.is(viaHandler.body, '"got secret"');
  });

  test(`${store}: after its retention an idempotency key is free again`, async (t) => {
    const { ingress, counts } = t.context[store]!;
    const tag = `${store}-short`;
    const headers = { ...json, 'idempotency-key': tag };
    t.is((await ingress.post('restate/call/Durable/shortDedup', { headers, body: JSON.stringify(tag) })).body, '1');
    t.is((await ingress.post('restate/call/Durable/shortDedup', { headers, body: JSON.stringify(tag) })).body, '1');
    await new Promise((r) => setTimeout(r, 1500));
    t.is((await ingress.post('restate/call/Durable/shortDedup', { headers, body: JSON.stringify(tag) })).body, '2');
    t.is((await counts())[`dedup:${tag}`], 2);
  });
}
