/**
 * Named signals (issue 15, point 1; service-protocol.md §9.9): a handler awaits
 * `ctx.signal(name)` while another resolves or rejects it with
 * `ctx.invocation(id).signal(name).resolve|reject`. Each answer below is what Restate 1.7.12
 * answered for the same handlers (test/support/services/programs.mjs), observed on a run of
 * the reference server from npm: the value or the rejection at once, before or after the
 * waiter awaits, inside all/race/allSettled and against a timeout; a signal sent to an
 * invocation that has not started yet (scheduled) is dropped. Both stores, each wait
 * streaming and suspended, and across a SIGKILL of the server.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { sendTo } from '../support/context.js';
import { sqlRows, stacksPerStore, nodeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;
stacksPerStore(test, { serviceFile: 'programs.mjs' }, nodeKinds);

type Ctx = ExecutionContext<Record<string, Stack>>;

async function signal(t: Ctx, stack: Stack, how: 'resolve' | 'reject' | 'many', body: unknown): Promise<void> {
  const res = await stack.ingress.post(`restate/call/Signaller/${how}`, { json: body });
  t.is(res.statusCode, 200, res.body);
}

async function outcome(stack: Stack, id: string): Promise<unknown> {
  const res = await stack.ingress.get(`restate/attach/${id}`);
  return JSON.parse(res.body);
}

async function statusOf(stack: Stack, id: string): Promise<string | undefined> {
  return (await sqlRows(stack.admin, `SELECT status FROM sys_invocation WHERE id = '${id}'`))[0]?.['status'] as
    string | undefined;
}

/** Starts a waiter and waits until it waits (suspended, for the suspending service, unless `quick`). */
async function startWaiter(
  stack: Stack,
  service: string,
  handler: string,
  input: { tag: string } & Record<string, unknown>,
  quick = false,
): Promise<string> {
  const id = await sendTo(stack, `${service}/${handler}`, input);
  await waitFor(async () => (await stack.counts())[`${input.tag}:started`] === 1, 15_000);
  if (service.startsWith('Suspending') && !quick)
    await waitFor(async () => (await statusOf(stack, id)) === 'suspended', 15_000);
  return id;
}

for (const store of nodeKinds) {
  for (const service of ['SignalWaiter', 'SuspendingSignalWaiter']) {
    const name = `${store} ${service}`;

    test(`${name}: resolve, then reject, a named signal the waiter awaits`, async (t) => {
      const stack = t.context[store]!;
      const a = await startWaiter(stack, service, 'one', { tag: `${name}-resolve`, name: 'go' });
      await signal(t, stack, 'resolve', { id: a, name: 'go', value: { x: 1 } });
      t.deepEqual(await outcome(stack, a), { value: { x: 1 } });
      const b = await startWaiter(stack, service, 'one', { tag: `${name}-reject`, name: 'go' });
      await signal(t, stack, 'reject', { id: b, name: 'go', reason: 'nope' });
      t.deepEqual(await outcome(stack, b), { rejected: { code: 500, message: 'nope' } });
    });

    test(`${name}: all, race and allSettled over two names`, async (t) => {
      const stack = t.context[store]!;
      const all = await startWaiter(stack, service, 'both', { tag: `${name}-all` });
      await signal(t, stack, 'resolve', { id: all, name: 'b', value: 'B' });
      await signal(t, stack, 'resolve', { id: all, name: 'a', value: 'A' });
      t.deepEqual(await outcome(stack, all), { value: ['A', 'B'] });

      const race = await startWaiter(stack, service, 'first', { tag: `${name}-race` });
      await signal(t, stack, 'resolve', { id: race, name: 'b', value: 'B' });
      t.deepEqual(await outcome(stack, race), { value: 'B' });

      const settled = await startWaiter(stack, service, 'settled', { tag: `${name}-settled` });
      await signal(t, stack, 'many', {
        id: settled,
        signals: [
          { name: 'a', reason: 'ra' },
          { name: 'b', value: 2 },
        ],
      });
      t.deepEqual(await outcome(stack, settled), { value: [{ rejected: { code: 500, message: 'ra' } }, { value: 2 }] });
    });

    test(`${name}: a named signal racing a timeout`, async (t) => {
      const stack = t.context[store]!;
      const late = await startWaiter(
        stack,
        service,
        'orTimeout',
        { tag: `${name}-timeout`, name: 'x', timeoutMs: 300 },
        true,
      );
      t.deepEqual(await outcome(stack, late), { value: 'timeout' });
      const inTime = await startWaiter(stack, service, 'orTimeout', {
        tag: `${name}-in-time`,
        name: 'x',
        timeoutMs: 60_000,
      });
      await signal(t, stack, 'resolve', { id: inTime, name: 'x', value: 'X' });
      t.deepEqual(await outcome(stack, inTime), { value: 'X' });
    });
  }

  test(`${store}: a signal that arrives before the waiter awaits it is kept`, async (t) => {
    const stack = t.context[store]!;
    const tag = `${store}-early`;
    // The waiter sleeps 1 s before it awaits; the signal lands in its journal meanwhile.
    const id = await startWaiter(stack, 'SignalWaiter', 'one', { tag, name: 'go', beforeMs: 1000 });
    await signal(t, stack, 'resolve', { id, name: 'go', value: 'before' });
    t.deepEqual(await outcome(stack, id), { value: 'before' });
  });

  test(`${store}: a signal to an invocation that has not started is dropped, as in Restate`, async (t) => {
    const stack = t.context[store]!;
    const tag = `${store}-scheduled`;
    const res = await stack.ingress.post('restate/send/SignalWaiter/one?delay=1s', { json: { tag, name: 'go' } });
    const id = (JSON.parse(res.body) as { invocationId: string }).invocationId;
    await signal(t, stack, 'resolve', { id, name: 'go', value: 'too early' });
    await waitFor(async () => (await stack.counts())[`${tag}:started`] === 1, 15_000);
    await signal(t, stack, 'resolve', { id, name: 'go', value: 'on time' });
    t.deepEqual(await outcome(stack, id), { value: 'on time' });
  });

  test.serial(`${store}: SIGKILL while suspended on a signal, and again right after it is sent`, async (t) => {
    const stack = t.context[store]!;
    const tag = `${store}-crash`;
    const id = await startWaiter(stack, 'SuspendingSignalWaiter', 'both', { tag });
    await stack.server.kill();
    await stack.server.restart();
    await signal(t, stack, 'resolve', { id, name: 'a', value: 'A' });
    await stack.server.kill();
    await stack.server.restart();
    await waitFor(async () => (await statusOf(stack, id)) === 'suspended', 15_000);
    await signal(t, stack, 'resolve', { id, name: 'b', value: 'B' });
    t.deepEqual(await outcome(stack, id), { value: ['A', 'B'] });
    const counts = await stack.counts();
    t.is(counts[`${tag}:started`], 1);
    t.is(counts[`${tag}:done`], 1);
    const signals = await sqlRows(
      stack.admin,
      `SELECT entry_lite_json FROM sys_journal WHERE id = '${id}' AND entry_type = 'Notification: Signal'`,
    );
    t.deepEqual(
      signals.map((r) => r['entry_lite_json']),
      [
        '{"Notification":{"ty":"Signal","id":{"SignalName":"a"},"result":"Success"}}',
        '{"Notification":{"ty":"Signal","id":{"SignalName":"b"},"result":"Success"}}',
      ],
    );
  });
}
