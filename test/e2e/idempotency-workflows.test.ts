/**
 * Idempotency keys and workflow runs: the first request runs, repeats get the same invocation
 * (reference-behavior.md §2.4, §2.5), also across a SIGKILL of the server.
 */
import anyTest, { type TestFn } from 'ava';
import { stacksPerStore, storeKinds, type Stack } from '../support/stack.js';

const test = anyTest as TestFn<Record<string, Stack>>;

stacksPerStore(test, { serviceFile: 'objects.mjs' });

const EXPIRES = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?\+00:00$/;

for (const store of storeKinds) {
  test(`${store}: idempotent calls run once and answer the same`, async (t) => {
    const { ingress, counts } = t.context[store]!;
    const tag = `${store}-idem`;
    const headers = { 'idempotency-key': `key-${store}` };
    // Concurrent repeats while the first runs attach to it.
    const [a, b] = await Promise.all([
      ingress.post('restate/call/Once/run', { headers, json: { tag, sleepMs: 300 } }),
      ingress.post('restate/call/Once/run', { headers, json: { tag: 'ignored', sleepMs: 0 } }),
    ]);
    t.is(a.statusCode, 200);
    t.is(a.body, `"${tag}:1"`);
    t.is(b.body, a.body);
    t.is(b.headers['x-restate-id'], a.headers['x-restate-id']);
    // After completion: the stored answer, with idempotency-expires.
    const later = await ingress.post('restate/call/Once/run', { headers, json: { tag } });
    t.is(later.body, a.body);
    t.regex(String(later.headers['idempotency-expires']), EXPIRES);
    const sent = await ingress.post('restate/send/Once/run', { headers, json: { tag } });
    t.is(sent.statusCode, 202);
    t.deepEqual(JSON.parse(sent.body), { invocationId: a.headers['x-restate-id'], status: 'PreviouslyAccepted' });
    t.is((await counts())[`once:${tag}`], 1);
    // The key is scoped by handler target: another handler or object key is another invocation.
    const other = await ingress.post('restate/call/Counter/idem-k/add', { headers, json: { delta: 1 } });
    t.is(other.statusCode, 200);
    t.not(other.headers['x-restate-id'], a.headers['x-restate-id']);
  });

  test(`${store}: a workflow id runs once; shared handlers run any time`, async (t) => {
    const { ingress, counts } = t.context[store]!;
    const wf = `${store}-wf1`;
    const before = await ingress.post(`restate/call/QuickWf/${wf}/info`);
    t.is(before.body, `"info ${wf}"`);
    const first = await ingress.post(`restate/call/QuickWf/${wf}/run`, { json: { sleepMs: 100 } });
    t.is(first.statusCode, 200);
    t.is(first.body, `"wf ${wf} 1"`);
    const again = await ingress.post(`restate/call/QuickWf/${wf}/run`, { json: {} });
    t.is(again.statusCode, 409);
    t.is(again.body, '{"code":409,"message":"the workflow method was already invoked","source":"invocation"}');
    t.is(again.headers['x-restate-id'], first.headers['x-restate-id']);
    t.is(again.headers['x-restate-error-source'], 'invocation');
    const sent = await ingress.post(`restate/send/QuickWf/${wf}/run`, { json: {} });
    t.deepEqual(JSON.parse(sent.body), { invocationId: first.headers['x-restate-id'], status: 'PreviouslyAccepted' });
    const withKey = await ingress.post(`restate/call/QuickWf/${wf}-b/run`, {
      headers: { 'idempotency-key': 'k' },
      json: {},
    });
    t.is(withKey.statusCode, 400);
    t.is(
      withKey.body,
      '{"code":400,"message":"cannot use the idempotency key with workflow handlers. The handler invocation will already be idempotent by the workflow key itself.","source":"ingress"}',
    );
    t.is((await counts())[`wf:${wf}`], 1);
  });
}

for (const store of storeKinds) {
  test(`${store}: calls from a handler with an idempotency key, or to a workflow run, name one invocation`, async (t) => {
    const { ingress, counts } = t.context[store]!;
    const tag = `${store}-from-handler`;
    const idem = await ingress.post('restate/call/Caller/idemTwice', { json: tag });
    t.is(idem.statusCode, 200);
    t.deepEqual(JSON.parse(idem.body), [`${tag}:1`, `${tag}:1`]);
    t.is((await counts())[`once:${tag}`], 1);
    const wf = await ingress.post('restate/call/Caller/wfTwice', { json: `${store}-wf-from-handler` });
    t.deepEqual(JSON.parse(wf.body), [`wf ${store}-wf-from-handler 1`, '409 the workflow method was already invoked']);
  });
}

for (const store of storeKinds) {
  test.serial(`${store}: an idempotency key still deduplicates after a SIGKILL`, async (t) => {
    const stack = t.context[store]!;
    const headers = { 'idempotency-key': `crash-${store}` };
    const tag = `${store}-idem-crash`;
    const sent = await stack.ingress.post('restate/send/Once/run', { headers, json: { tag, sleepMs: 1500 } });
    const { invocationId } = JSON.parse(sent.body) as { invocationId: string };
    await new Promise((r) => setTimeout(r, 500));
    await stack.server.kill();
    await stack.server.restart();
    const repeat = await stack.ingress.post('restate/send/Once/run', { headers, json: { tag } });
    t.deepEqual(JSON.parse(repeat.body), { invocationId, status: 'PreviouslyAccepted' });
    const done = await stack.ingress.get(`restate/attach/${invocationId}`);
    t.is(done.body, `"${tag}:1"`);
    t.is((await stack.counts())[`once:${tag}`], 1);
  });
}
