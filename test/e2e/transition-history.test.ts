/**
 * The transition history is stored with the transitions themselves: invocations that suspend
 * on a durable sleep, a SIGKILL of the server while they sleep, a restart; afterwards each
 * history lists every committed transition exactly once, in order, through /query. A lock
 * grant, applied without a commit of its own, is stored with the invocation's next commit.
 */
import test from 'ava';
import { sqlRows, startStack, storeKinds, type Stack } from '../support/stack.js';
import { resolveAwakeable, sendTo as send } from '../support/context.js';
import { waitFor } from '../support/wait.js';

const N = 5;

interface TransitionRow {
  id: string;
  index: number;
  from_state?: string;
  event: string;
  to_state: string;
  attempt: number;
}

async function transitions(stack: Stack, ids: string[]): Promise<Map<string, TransitionRow[]>> {
  const list = ids.map((id) => `'${id}'`).join(', ');
  const rows = (await sqlRows(
    stack.admin,
    `SELECT id, index, from_state, event, to_state, attempt FROM sys_invocation_transitions WHERE id IN (${list}) ORDER BY id, index`,
  )) as unknown as TransitionRow[];
  return new Map(ids.map((id) => [id, rows.filter((r) => r.id === id)]));
}

const path = (rows: TransitionRow[] | undefined) =>
  (rows ?? []).map((r) => `${r.from_state ?? '∅'} -${r.event}-> ${r.to_state}`);

for (const store of storeKinds) {
  test.serial(`${store}: after a SIGKILL and a restart the history has every committed transition once`, async (t) => {
    const stack = await startStack(store);
    try {
      const sent = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          stack.ingress.post('restate/send/Suspender/steps', { json: { tag: `${store}-h${i}`, sleepMs: 5000 } }),
        ),
      );
      const ids = sent.map((r) => (JSON.parse(r.body) as { invocationId: string }).invocationId);
      // Each sleeps, suspended (the SDK may suspend once more before, waking at once when what
      // it awaited was already stored): wait until every history ends there and holds still.
      let before = new Map<string, string[]>();
      await waitFor(async () => {
        const now = new Map([...(await transitions(stack, ids))].map(([id, rows]) => [id, path(rows)]));
        const settled = [...now].every(
          ([id, p]) => p.at(-1) === 'running -suspend-> suspended' && p.length === before.get(id)?.length,
        );
        before = now;
        if (!settled) await new Promise((r) => setTimeout(r, 300));
        return settled;
      }, 20_000);
      for (const [id, p] of before) t.is(p[0], '∅ -xstate.init-> running', id);

      await stack.server.kill();
      await stack.server.restart();
      const results = await Promise.all(ids.map((id) => stack.ingress.get(`restate/attach/${id}`)));
      for (const r of results) t.is(r.statusCode, 200, stack.server.output().slice(-2000));

      for (const [id, rows] of await transitions(stack, ids)) {
        const earlier = before.get(id)!;
        t.deepEqual(path(rows).slice(0, earlier.length), earlier, id);
        // Woken, the attempt runs step b; on a loaded machine the SDK can take longer than the
        // 200 ms inactivity timeout for it and suspend once more, waking as soon as b is stored.
        const WAKE = 'suspended -wake-> running';
        const SUSPEND = 'running -suspend-> suspended';
        let rest = path(rows).slice(earlier.length);
        while (rest[0] === WAKE && rest[1] === SUSPEND) rest = rest.slice(2);
        t.deepEqual(rest, [WAKE, 'running -complete-> completed'], id);
        t.deepEqual(
          rows.map((r) => r.index),
          [...rows.keys()],
        );
        t.true(rows.every((r) => r.attempt === 0));
      }
    } finally {
      await stack.stop();
    }
  });
}

for (const store of storeKinds) {
  test.serial(`${store}: an invocation queued behind its key's lock records the grant`, async (t) => {
    const stack = await startStack(store, { serviceFile: 'ui.mjs' });
    try {
      const tag = `${store}-lock`;
      const holder = await send(stack, 'Tally/locked/hold', tag);
      const queued = await send(stack, 'Tally/locked/add', 1);
      await waitFor(async () => path((await transitions(stack, [queued])).get(queued)).length === 1, 10_000);
      await resolveAwakeable(stack, tag, 'done');
      for (const id of [holder, queued]) t.is((await stack.ingress.get(`restate/attach/${id}`)).statusCode, 200);
      t.deepEqual(path((await transitions(stack, [queued])).get(queued)), [
        '∅ -xstate.init-> pending',
        'pending -lockGranted-> running',
        'running -complete-> completed',
      ]);
    } finally {
      await stack.stop();
    }
  });
}
