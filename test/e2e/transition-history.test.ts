/**
 * The transition history is stored with the transitions themselves: invocations that suspend
 * on a durable sleep, a SIGKILL of the server while they sleep, a restart; afterwards each
 * history lists every committed transition exactly once, in order, through /query.
 */
import test from 'ava';
import { startStack, storeKinds, type Stack } from '../support/stack.js';
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
  const res = await stack.admin.post('query', {
    headers: { accept: 'application/json' },
    json: { query: `SELECT id, index, from_state, event, to_state, attempt FROM sys_invocation_transitions WHERE id IN (${list}) ORDER BY id, index` },
  });
  const rows = (JSON.parse(res.body) as { rows: TransitionRow[] }).rows;
  return new Map(ids.map((id) => [id, rows.filter((r) => r.id === id)]));
}

const path = (rows: TransitionRow[] | undefined) => (rows ?? []).map((r) => `${r.from_state ?? '∅'} -${r.event}-> ${r.to_state}`);

for (const store of storeKinds) {
  test.serial(`${store}: after a SIGKILL and a restart the history has every committed transition once`, async (t) => {
    const stack = await startStack(store);
    try {
      const sent = await Promise.all(
        Array.from({ length: N }, (_, i) => stack.ingress.post('restate/send/Suspender/steps', { json: { tag: `${store}-h${i}`, sleepMs: 3000 } })),
      );
      const ids = sent.map((r) => (JSON.parse(r.body) as { invocationId: string }).invocationId);
      const suspended = ['∅ -xstate.init-> running', 'running -suspend-> suspended'];
      await waitFor(async () => [...(await transitions(stack, ids)).values()].every((rows) => rows.length === 2), 20_000);
      for (const [id, rows] of await transitions(stack, ids)) t.deepEqual(path(rows), suspended, id);

      await stack.server.kill();
      await stack.server.restart();
      const results = await Promise.all(ids.map((id) => stack.ingress.get(`restate/attach/${id}`)));
      for (const r of results) t.is(r.statusCode, 200, stack.server.output().slice(-2000));

      for (const [id, rows] of await transitions(stack, ids)) {
        t.deepEqual(path(rows), [...suspended, 'suspended -wake-> running', 'running -complete-> completed'], id);
        t.deepEqual(rows.map((r) => r.index), [0, 1, 2, 3]);
        t.true(rows.every((r) => r.attempt === 0));
      }
    } finally {
      await stack.stop();
    }
  });
}
