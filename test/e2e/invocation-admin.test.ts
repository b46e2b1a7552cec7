/**
 * Operator actions on invocations through the admin API (reference-behavior.md §3.5), on both
 * stores, including that a pause survives a SIGKILL of the server.
 */
import anyTest, { type TestFn } from 'ava';
import { stacksPerStore, nodeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;

stacksPerStore(test, {}, nodeKinds);

async function sendSleepy(stack: Stack, ms: number): Promise<string> {
  const res = await stack.ingress.post('restate/send/Durable/sleepy', { json: ms });
  return (JSON.parse(res.body) as { invocationId: string }).invocationId;
}

/** A `Durable/parent` invocation waiting for the long sleep it called, and that callee's id. */
async function startCallTree(stack: Stack, tag: string): Promise<{ parent: string; child: string }> {
  const sent = await stack.ingress.post('restate/send/Durable/parent', { json: { tag, ms: 30_000 } });
  const parent = (JSON.parse(sent.body) as { invocationId: string }).invocationId;
  let child = '';
  await waitFor(async () => {
    child = String((await stack.counts())[`child:${tag}`] ?? '');
    return child !== '';
  }, 10_000);
  return { parent, child };
}

const settle = () => new Promise((r) => setTimeout(r, 300));

for (const store of nodeKinds) {
  test(`${store}: cancel delivers the cancel signal; the call fails with 409 Cancelled`, async (t) => {
    const stack = t.context[store]!;
    const id = await sendSleepy(stack, 30_000);
    await settle();
    const res = await stack.admin.patch(`invocations/${id}/cancel`);
    t.is(res.statusCode, 202);
    t.is(res.body, '');
    const out = await stack.ingress.get(`restate/attach/${id}`);
    t.is(out.statusCode, 409);
    t.is(out.body, '{"code":409,"message":"Cancelled","source":"invocation"}');
    const again = await stack.admin.patch(`invocations/${id}/cancel`);
    t.is(again.statusCode, 409);
    t.is(again.body, `{"message":"The invocation '${id}' was already completed.","restate_code":null}`);
  });

  test(`${store}: kill ends the invocation at once`, async (t) => {
    const stack = t.context[store]!;
    const id = await sendSleepy(stack, 30_000);
    await settle();
    t.is((await stack.admin.patch(`invocations/${id}/kill`)).statusCode, 200);
    const out = await stack.ingress.get(`restate/output/${id}`);
    t.is(out.statusCode, 409);
    t.is(out.body, '{"code":409,"message":"killed","source":"invocation"}');
  });

  test(`${store}: purge forgets completed invocations only`, async (t) => {
    const stack = t.context[store]!;
    const running = await sendSleepy(stack, 30_000);
    const notYet = await stack.admin.patch(`invocations/${running}/purge`);
    t.is(notYet.statusCode, 409);
    t.is(notYet.body, `{"message":"The invocation '${running}' is not yet completed.","restate_code":null}`);
    await stack.admin.patch(`invocations/${running}/kill`);
    const call = await stack.ingress.post('restate/call/Durable/greet', { json: 'p' });
    const id = String(call.headers['x-restate-id']);
    t.is((await stack.admin.patch(`invocations/${id}/purge`)).statusCode, 200);
    t.is((await stack.ingress.get(`restate/output/${id}`)).statusCode, 404);
    const twice = await stack.admin.patch(`invocations/${id}/purge`);
    t.is(twice.statusCode, 404);
    t.is(twice.body, `{"message":"The requested invocation '${id}' does not exist","restate_code":null}`);
  });

  test(`${store}: bad and unknown ids`, async (t) => {
    const { admin } = t.context[store]!;
    const bad = await admin.patch('invocations/garbage/cancel');
    t.is(bad.statusCode, 400);
    t.is(
      bad.body,
      `{"message":"The request field 'invocation_id' is invalid. Reason: bad format","restate_code":null}`,
    );
    t.is((await admin.patch('v4/invocations/inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi/kill')).statusCode, 404);
    t.is((await admin.delete('invocations/inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi?mode=kill')).statusCode, 202);
    const mode = await admin.delete('invocations/inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi?mode=bogus');
    t.is(mode.statusCode, 400);
    t.regex(mode.body, /unknown variant `bogus`/);
  });
}

for (const store of nodeKinds) {
  test.serial(`${store}: a pause holds across a SIGKILL, and resume finishes the invocation`, async (t) => {
    const stack = t.context[store]!;
    const id = await sendSleepy(stack, 800);
    await settle();
    t.is((await stack.admin.patch(`invocations/${id}/pause`)).statusCode, 202);
    t.is((await stack.admin.patch(`invocations/${id}/pause`)).statusCode, 200);
    await stack.server.kill();
    await stack.server.restart();
    await new Promise((r) => setTimeout(r, 1000));
    t.is((await stack.ingress.get(`restate/output/${id}`)).statusCode, 470, 'still paused after the sleep was due');
    t.is((await stack.admin.patch(`invocations/${id}/resume`)).statusCode, 200);
    const done = await stack.ingress.get(`restate/attach/${id}`);
    t.is(done.statusCode, 200);
    t.is(done.body, '"slept 800"');
    const completed = await stack.admin.patch(`invocations/${id}/resume`);
    t.is(completed.statusCode, 409);
    t.is(completed.body, `{"message":"The invocation '${id}' is completed, cannot be resumed.","restate_code":null}`);
  });
}

for (const store of nodeKinds) {
  test(`${store}: cancelling a caller cancels the call it waits for`, async (t) => {
    const stack = t.context[store]!;
    const { parent, child } = await startCallTree(stack, `${store}-tree`);
    t.is((await stack.admin.patch(`invocations/${parent}/cancel`)).statusCode, 202);
    const parentOut = await stack.ingress.get(`restate/attach/${parent}`);
    t.is(parentOut.statusCode, 409);
    t.is(parentOut.body, '{"code":409,"message":"Cancelled","source":"invocation"}');
    const childOut = await stack.ingress.get(`restate/attach/${child}`);
    t.is(childOut.statusCode, 409);
    t.is(childOut.body, '{"code":409,"message":"Cancelled","source":"invocation"}');
  });
}

for (const store of nodeKinds) {
  test(`${store}: killing a caller kills the call it waits for`, async (t) => {
    const stack = t.context[store]!;
    const { parent, child } = await startCallTree(stack, `${store}-kill-tree`);
    t.is((await stack.admin.patch(`invocations/${parent}/kill`)).statusCode, 200);
    const killed = '{"code":409,"message":"killed","source":"invocation"}';
    t.is((await stack.ingress.get(`restate/attach/${parent}`)).body, killed);
    t.is((await stack.ingress.get(`restate/attach/${child}`)).body, killed);
  });
}
