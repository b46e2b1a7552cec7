/**
 * Durability of the context operations that cross invocations: the server is SIGKILLed while
 * an outgoing call's callee sleeps, while an awakeable waits (and right after an ingress
 * resolve was accepted), and while an attach waits; after the restart every invocation must
 * complete, and every ctx.run side effect that was stored must not run again.
 */
import test from 'ava';
import { sqlRows, startStack, storeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';
import { awaitPublished, sendTo as send } from '../support/context.js';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function crash(stack: Stack): Promise<void> {
  await stack.server.kill();
  await stack.server.restart();
}

for (const store of storeKinds) {
  test(`${store}: SIGKILL while a called callee sleeps: the call completes, each step once`, async (t) => {
    const stack = await startStack(store, { serviceFile: 'context.mjs' });
    try {
      const tag = `${store}-crash-call`;
      const id = await send(stack, 'Caller/callSlow', { tag, sleepMs: 1500 });
      await waitFor(async () => (await stack.counts())[`${tag}:callee-a`] === 1, 15_000);
      await pause(300);
      await crash(stack);
      const res = await stack.ingress.get(`restate/attach/${id}`);
      t.is(res.statusCode, 200, stack.server.output().slice(-2000));
      t.is(res.body, `"slow ${tag}"`);
      const c = await stack.counts();
      for (const step of ['before', 'callee-a', 'callee-b', 'after']) t.is(c[`${tag}:${step}`], 1, step);
    } finally {
      await stack.stop();
    }
  });

  test(`${store}: SIGKILL while awakeables wait and right after an accepted resolve`, async (t) => {
    const stack = await startStack(store, { serviceFile: 'context.mjs' });
    try {
      const waiting = `${store}-crash-awk-waiting`;
      const resolved = `${store}-crash-awk-resolved`;
      const [waitingId, resolvedId] = await Promise.all([
        send(stack, 'Awakeables/wait', { tag: waiting }),
        send(stack, 'Awakeables/wait', { tag: resolved }),
      ]);
      const [waitingAwk, resolvedAwk] = await Promise.all([
        awaitPublished(stack, waiting, 'awakeable'),
        awaitPublished(stack, resolved, 'awakeable'),
      ]);
      // 202 means stored: the resolve must survive a kill right after it.
      const accepted = await stack.ingress.post(`restate/a/${resolvedAwk}/resolve`, { json: 'before the crash' });
      t.is(accepted.statusCode, 202);
      await crash(stack);
      const late = await stack.ingress.post(`restate/a/${waitingAwk}/resolve`, { json: 'after the crash' });
      t.is(late.statusCode, 202);
      const [w, r] = await Promise.all([waitingId, resolvedId].map((id) => stack.ingress.get(`restate/attach/${id}`)));
      t.is(w!.statusCode, 200, stack.server.output().slice(-2000));
      t.is(w!.body, '{"resolvedWith":"after the crash"}');
      t.is(r!.statusCode, 200);
      t.is(r!.body, '{"resolvedWith":"before the crash"}');
      const c = await stack.counts();
      t.is(c[`${waiting}:before`], 1);
      t.is(c[`${waiting}:after`], 1);
      t.is(c[`${waiting}:awakeable=${waitingAwk}`], 1, 'published once');
      t.is(c[`${resolved}:before`], 1);
      // The resolved one may have been running its last step when the server died: that
      // step's result was not stored, so it may run again (at least once, §10).
      t.true((c[`${resolved}:after`] ?? 0) >= 1);
    } finally {
      await stack.stop();
    }
  });

  test(`${store}: SIGKILL while an attach waits: answered after the restart`, async (t) => {
    const stack = await startStack(store, { serviceFile: 'context.mjs' });
    try {
      const tag = `${store}-crash-attach`;
      const target = await send(stack, 'Callee/slow', { tag, sleepMs: 3000 });
      const attacher = await send(stack, 'Attacher/attach', target);
      // Killed once step a is stored and the callee sleeps: a step cut by the kill would run
      // again (at least once, §10), and this test counts steps.
      await waitFor(
        async () =>
          (
            await sqlRows(
              stack.admin,
              `SELECT index FROM sys_journal WHERE id = '${target}' AND entry_type = 'Command: Sleep'`,
            )
          ).length === 1,
        15_000,
      );
      await crash(stack);
      const res = await stack.ingress.get(`restate/attach/${attacher}`);
      t.is(res.statusCode, 200, stack.server.output().slice(-2000));
      t.is(res.body, `{"value":"slow ${tag}"}`);
      const c = await stack.counts();
      // A step run twice: when its entries were stored, and what the server said meanwhile.
      if (c[`${tag}:callee-a`] !== 1)
        t.log(
          JSON.stringify(
            await sqlRows(stack.admin, `SELECT index, entry_type, appended_at FROM sys_journal WHERE id = '${target}'`),
          ),
          stack.server.output(),
        );
      t.is(c[`${tag}:callee-a`], 1);
      t.is(c[`${tag}:callee-b`], 1);
    } finally {
      await stack.stop();
    }
  });
}
