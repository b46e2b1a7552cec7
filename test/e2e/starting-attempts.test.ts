/**
 * Attempts start through a gate bounded while invocations are being admitted
 * (runtime/invoker/start-gate.ts). With a single slot: callers and their callees all run (a
 * caller's slot is free once it sent its call, and a callee's admission is over once it is
 * stored), handlers slow to write their first journal entry still run side by side, and
 * /metrics shows that nothing is left waiting.
 */
import test from 'ava';
import { startStack, storeKinds } from '../support/stack.js';
import { sendTo } from '../support/context.js';

for (const store of storeKinds) {
  test.serial(`${store}: one starting slot: call trees complete, slow starters overlap`, async (t) => {
    const stack = await startStack(store, { env: { REDSTATE_STARTING_ATTEMPTS: '1' } });
    try {
      const parents = await Promise.all(
        Array.from({ length: 8 }, (_, i) => sendTo(stack, 'Durable/parent', { tag: `${store}-gate-${i}`, ms: 300 })),
      );
      const answers = await Promise.all(parents.map((id) => stack.ingress.get(`restate/attach/${id}`)));
      t.deepEqual(
        answers.map((r) => [r.statusCode, r.body]),
        parents.map(() => [200, '"slept 300"']),
      );

      const started = Date.now();
      const slow = await Promise.all(
        Array.from({ length: 4 }, () => stack.ingress.post('restate/call/Durable/slowStart', { json: 1000 })),
      );
      const took = Date.now() - started;
      t.deepEqual(
        slow.map((r) => r.statusCode),
        [200, 200, 200, 200],
      );
      // One after the other they would take 4 s at least.
      t.true(took < 3500, `4 slow starters took ${took} ms`);
      const metrics = await stack.admin.get('metrics');
      t.regex(metrics.body, /^redstate_attempts_waiting_to_start 0$/m);
    } finally {
      await stack.stop();
    }
  });
}
