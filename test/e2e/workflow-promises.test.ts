/**
 * Durable promises of workflows: run waits on a promise that shared handlers resolve, reject
 * or peek, before, during and after run (reference-behavior.md §2.4), also across a SIGKILL.
 */
import anyTest, { type TestFn } from 'ava';
import { sqlRows, stacksPerStore, nodeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;
stacksPerStore(test, { serviceFile: 'workflows.mjs' }, nodeKinds);

for (const store of nodeKinds) {
  test(`${store}: run waits for the promise a shared handler resolves`, async (t) => {
    const { ingress } = t.context[store]!;
    const wf = `${store}-w1`;
    const run = ingress.post(`restate/call/Signup/${wf}/run`, { json: 'a@b.c' });
    await waitFor(async () => (await ingress.post(`restate/call/Signup/${wf}/status`)).body === '"waiting"', 10_000);
    t.is((await ingress.post(`restate/call/Signup/${wf}/peek`)).body, 'null');
    t.is((await ingress.post(`restate/call/Signup/${wf}/verify`, { json: 'V' })).body, '"resolved"');
    const done = await run;
    t.is(done.statusCode, 200);
    t.is(done.body, '"ok a@b.c V"');
    t.is((await ingress.post(`restate/call/Signup/${wf}/peek`)).body, '"V"');
    const rows = await sqlRows(
      t.context[store]!.admin,
      `SELECT key, completed, completion_success_value_utf8 FROM sys_promise WHERE service_key = '${wf}'`,
    );
    t.deepEqual(rows, [{ key: 'verified', completed: true, completion_success_value_utf8: '"V"' }]);
    const second = await ingress.post(`restate/call/Signup/${wf}/verify`, { json: 'W' });
    // A promise completes once; the reference's text for the second completion.
    t.is(second.statusCode, 409);
    t.is(second.body, '{"code":409,"message":"promise was already completed","source":"invocation"}');
  });

  test(`${store}: a promise resolved before run starts, and a rejected one`, async (t) => {
    const { ingress } = t.context[store]!;
    const early = `${store}-early`;
    t.is((await ingress.post(`restate/call/Signup/${early}/verify`, { json: 'E' })).body, '"resolved"');
    const run = await ingress.post(`restate/call/Signup/${early}/run`, { json: 'n@x' });
    t.is(run.body, '"ok n@x E"');
    const refused = `${store}-refused`;
    const pending = ingress.post(`restate/call/Signup/${refused}/run`, { json: 'r@x' });
    await waitFor(
      async () => (await ingress.post(`restate/call/Signup/${refused}/status`)).body === '"waiting"',
      10_000,
    );
    await ingress.post(`restate/call/Signup/${refused}/refuse`, { json: 'no way' });
    const failed = await pending;
    t.is(failed.statusCode, 500);
    t.is(failed.body, '{"code":500,"message":"no way","source":"invocation"}');
  });
}

for (const store of nodeKinds) {
  test.serial(`${store}: a waiting run survives a SIGKILL and completes when resolved`, async (t) => {
    const stack = t.context[store]!;
    const wf = `${store}-crash`;
    const sent = await stack.ingress.post(`restate/send/Signup/${wf}/run`, { json: 'k@x' });
    const { invocationId } = JSON.parse(sent.body) as { invocationId: string };
    await waitFor(
      async () => (await stack.ingress.post(`restate/call/Signup/${wf}/status`)).body === '"waiting"',
      10_000,
    );
    await stack.server.kill();
    await stack.server.restart();
    t.is((await stack.ingress.post(`restate/call/Signup/${wf}/verify`, { json: 'K' })).body, '"resolved"');
    const done = await stack.ingress.get(`restate/attach/${invocationId}`);
    t.is(done.body, '"ok k@x K"');
    t.is((await stack.counts())[`started:${wf}`], 1);
  });
}
