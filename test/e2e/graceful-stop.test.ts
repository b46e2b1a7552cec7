/**
 * SIGTERM stops the server gracefully: no new connections, calls in flight are still answered
 * within the grace period, then what is left is closed; nothing durable is cut, and after a
 * restart every invocation carries on exactly once.
 */
import test from 'ava';
import { startStack, storeKinds } from '../support/stack.js';

for (const store of storeKinds) {
  test.serial(
    `${store}: SIGTERM answers calls that finish within the grace period, and closes the rest; a restart completes them`,
    async (t) => {
      const stack = await startStack(store);
      try {
        const { ingress } = stack;
        // Finishes within the grace period (2 s in tests): answered before the process exits.
        const quick = ingress.post('restate/call/Durable/steps', { json: { tag: `quick-${store}`, sleepMs: 700 } });
        // Sleeps past it: its connection is closed, the invocation stays durable.
        const slow = await ingress.post('restate/send/Durable/steps', {
          json: { tag: `slow-${store}`, sleepMs: 4_000 },
        });
        t.is(slow.statusCode, 202);
        const slowId = (JSON.parse(slow.body) as { invocationId: string }).invocationId;
        const waitingForSlow = ingress.get(`restate/attach/${slowId}`).catch((err: Error) => err);
        await new Promise((r) => setTimeout(r, 300));

        const started = Date.now();
        const code = await stack.server.terminate();
        const took = Date.now() - started;
        t.is(code, 0, stack.server.output().slice(-2000));
        t.true(took < 2_000 + 3_000, `stopping took ${took} ms`);
        const answered = await quick;
        t.is(answered.statusCode, 200);
        t.is(answered.body, `"quick-${store}:111"`);
        const cut = await waitingForSlow;
        t.true(cut instanceof Error || cut.statusCode >= 500, 'the attach still waiting was closed');

        await stack.server.restart();
        const done = await ingress.get(`restate/attach/${slowId}`);
        t.is(done.statusCode, 200);
        t.is(done.body, `"slow-${store}:111"`);
        const c = await stack.counts();
        for (const step of ['a', 'b', 'c']) {
          t.is(c[`quick-${store}:${step}`], 1);
          t.is(c[`slow-${store}:${step}`], 1);
        }
      } finally {
        await stack.stop();
      }
    },
  );
}
