/**
 * State written by an exclusive handler is visible as soon as the command arrives, not only at
 * the handler's next durable step (as in Restate): while the handler waits on an awakeable or
 * a long `ctx.run`, a shared handler, the `state` table and `sys_journal` all show the new value
 * (and the Run command).
 */
import anyTest, { type TestFn } from 'ava';
import { awaitPublished } from '../support/context.js';
import { sqlRows, stacksPerStore, storeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;
stacksPerStore(test, { serviceFile: 'objects.mjs' });

for (const store of storeKinds) {
  test(`${store}: a value set before awaiting an awakeable is visible while the handler waits`, async (t) => {
    const stack = t.context[store]!;
    const key = `visible-${store}`;
    const sent = await stack.ingress.post(`restate/send/Counter/${key}/setThenWait`, { json: { count: 42, tag: key } });
    t.is(sent.statusCode, 202);
    const invocationId = (JSON.parse(sent.body) as { invocationId: string }).invocationId;
    const awakeable = await awaitPublished(stack, 'awk', key);

    const get = await stack.ingress.post(`restate/call/Counter/${key}/get`, { json: null });
    t.is(get.body, '42', 'a shared handler reads the new value');
    const state = await sqlRows(
      stack.admin,
      `SELECT value_utf8 FROM state WHERE service_name = 'Counter' AND service_key = '${key}' AND key = 'count'`,
    );
    t.deepEqual(state, [{ value_utf8: '42' }]);
    const journal = await sqlRows(
      stack.admin,
      `SELECT entry_type FROM sys_journal WHERE id = '${invocationId}' ORDER BY index`,
    );
    t.true(
      journal.some((r) => r['entry_type'] === 'Command: SetState'),
      JSON.stringify(journal),
    );
    const [status] = await sqlRows(stack.admin, `SELECT status FROM sys_invocation WHERE id = '${invocationId}'`);
    t.is(status?.['status'], 'running', 'the handler is still waiting');

    const resolved = await stack.ingress.post(`restate/awakeables/${awakeable}/resolve`, { json: 'go' });
    t.is(resolved.statusCode, 202);
    const result = await stack.ingress.get(`restate/attach/${invocationId}`);
    t.is(result.statusCode, 200);
    t.deepEqual(JSON.parse(result.body), { resolvedWith: 'go' });
    await waitFor(
      async () => (await stack.ingress.post(`restate/call/Counter/${key}/get`, { json: null })).body === '42',
      5_000,
    );
  });
}

for (const store of storeKinds) {
  test(`${store}: a value set before a long ctx.run, and the Run command, are visible while the run works`, async (t) => {
    const stack = t.context[store]!;
    const key = `run-${store}`;
    const sent = await stack.ingress.post(`restate/send/Counter/${key}/setThenRun`, { json: { count: 7 } });
    t.is(sent.statusCode, 202);
    const invocationId = (JSON.parse(sent.body) as { invocationId: string }).invocationId;
    const entries = async () =>
      (
        await sqlRows(stack.admin, `SELECT entry_type FROM sys_journal WHERE id = '${invocationId}' ORDER BY index`)
      ).map((r) => r['entry_type']);
    await waitFor(async () => (await entries()).includes('Command: Run'), 2_000);
    t.deepEqual(await entries(), ['Command: Input', 'Command: SetState', 'Command: Run']);
    t.is((await stack.ingress.post(`restate/call/Counter/${key}/get`, { json: null })).body, '7');
    const [status] = await sqlRows(stack.admin, `SELECT status FROM sys_invocation WHERE id = '${invocationId}'`);
    t.is(status?.['status'], 'running', 'the run still works');
    const result = await stack.ingress.get(`restate/attach/${invocationId}`);
    t.is(result.body, '"ran"');
  });
}
