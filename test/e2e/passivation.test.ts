/**
 * Invocations that only wait (suspended on a sleep) leave the server's memory: the store holds
 * them. After a SIGKILL and a restart they are not loaded again until their timer fires, and
 * they complete exactly once.
 */
import test from 'ava';
import { sqlRows, startStack, storeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const N = 40;
// Long enough that no timer fires before the restart, even on a busy machine.
const SLEEP_MS = 15_000;

async function actorsInMemory(stack: Stack): Promise<number> {
  const text = await (await fetch(`${stack.server.admin}/metrics`)).text();
  const m = /^redstate_actors_in_memory\{kind="invocation"\} (\d+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

for (const store of storeKinds) {
  test.serial(
    `${store}: suspended invocations leave memory, stay out of it across a restart, and complete once`,
    async (t) => {
      const stack = await startStack(store);
      try {
        const tags = Array.from({ length: N }, (_, i) => `${store}-passive-${i}`);
        const ids = await Promise.all(
          tags.map(async (tag) => {
            // Suspender: a 200 ms inactivity timeout makes the SDK suspend while it sleeps.
            const r = await stack.ingress.post('restate/send/Suspender/steps', { json: { tag, sleepMs: SLEEP_MS } });
            return (JSON.parse(r.body) as { invocationId: string }).invocationId;
          }),
        );
        const suspended = async () =>
          Number(
            (await sqlRows(stack.admin, "SELECT count(*) AS n FROM sys_invocation WHERE status = 'suspended'"))[0]?.[
              'n'
            ],
          );
        await waitFor(async () => (await suspended()) === N, 30_000);
        await waitFor(async () => (await actorsInMemory(stack)) === 0, 10_000);
        t.is(await actorsInMemory(stack), 0, 'no suspended invocation is held in memory');

        await stack.server.kill();
        await stack.server.restart();
        t.is(await actorsInMemory(stack), 0, 'recovery does not load suspended invocations');
        t.is(await suspended(), N);

        const done = await Promise.all(ids.map((id) => stack.ingress.get(`restate/attach/${id}`)));
        t.deepEqual(
          done.map((r) => r.statusCode),
          ids.map(() => 200),
        );
        const c = await stack.counts();
        for (const tag of tags) {
          t.is(c[`${tag}:a`], 1, `${tag}: the step before the sleep ran once`);
          t.is(c[`${tag}:b`], 1, `${tag}: the step after it ran once`);
        }
      } finally {
        await stack.stop();
      }
    },
  );
}
