/**
 * Durability: 20 invocations each run 3 ctx.run steps and then sleep; the server is SIGKILLed
 * during the sleep and restarted. Every invocation must complete, every step must have run
 * exactly once, and the sleep must resume with its remaining time, not start over.
 */
import test from 'ava';
import { startStack, storeKinds } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const N = 20;
const SLEEP_MS = 4000;

for (const store of storeKinds) {
  test.serial(`${store}: SIGKILL during a durable sleep loses nothing and repeats nothing`, async (t) => {
    const stack = await startStack(store);
    try {
      const tags = Array.from({ length: N }, (_, i) => `${store}-crash-${i}`);
      const sent = await Promise.all(
        tags.map((tag) => stack.ingress.post('restate/send/Durable/steps', { json: { tag, sleepMs: SLEEP_MS } })),
      );
      const ids = sent.map((r) => {
        t.is(r.statusCode, 202);
        return (JSON.parse(r.body) as { invocationId: string }).invocationId;
      });
      // Every invocation has passed its three steps and is sleeping.
      await waitFor(async () => {
        const c = await stack.counts();
        return tags.every((tag) => c[`${tag}:c`] === 1);
      }, 20_000);
      await new Promise((r) => setTimeout(r, 1500));
      await stack.server.kill();
      await stack.server.restart();
      const restartedAt = Date.now();

      const results = await Promise.all(ids.map((id) => stack.ingress.get(`restate/attach/${id}`)));
      const doneAt = Date.now();
      for (const [i, r] of results.entries()) {
        t.is(r.statusCode, 200, stack.server.output().slice(-2000));
        t.is(r.body, `"${tags[i]}:111"`);
      }
      const c = await stack.counts();
      for (const tag of tags) {
        t.is(c[`${tag}:a`], 1, `${tag} step a`);
        t.is(c[`${tag}:b`], 1, `${tag} step b`);
        t.is(c[`${tag}:c`], 1, `${tag} step c`);
        t.is(c[`${tag}:done`], 1, `${tag} finished once`);
      }
      // Only the remaining time is slept: sleeping the whole time again would end SLEEP_MS or more
      // after the restart, however long the restart itself took on a busy machine.
      t.true(doneAt - restartedAt < SLEEP_MS, `done ${doneAt - restartedAt} ms after the restart`);
    } finally {
      await stack.stop();
    }
  });
}
