/**
 * Cancellation from handlers and through the admin API, the same through any node (issue 29):
 * a handler cancelling the calls it started, a handler cancelling an invocation it did not
 * start, an attach to what was cancelled, on one node and on two nodes over one Redis (every
 * request to either node in turn); and on two nodes, a SIGKILL of one node in the middle of a
 * storm of cancellations loses none of them.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import got, { type Got } from 'got';
import { awaitPublished, sendTo } from '../support/context.js';
import { isMultiNode, nodeKinds, sqlRows, stacksPerStore, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;
stacksPerStore(test, { serviceFile: 'cancellation.mjs' }, nodeKinds);

type Ctx = ExecutionContext<Record<string, Stack>>;
type Outcome = { value?: unknown; rejected?: { code: number; message: string } };

async function call<T>(t: Ctx, stack: Stack, path: string, json: unknown): Promise<T> {
  const res = await stack.ingress.post(`restate/call/${path}`, { json });
  t.is(res.statusCode, 200, `${path}: ${res.body}`);
  return (res.body === '' ? undefined : JSON.parse(res.body)) as T;
}

/** The ids among `ids` that have not completed (none once every cancellation landed). */
async function notCompleted(admin: Got, ids: string[]): Promise<Array<Record<string, unknown>>> {
  if (ids.length === 0) return [];
  const list = ids.map((id) => `'${id}'`).join(', ');
  return sqlRows(admin, `SELECT id, status FROM sys_invocation WHERE id IN (${list}) AND status <> 'completed'`);
}

const client = (prefixUrl: string) =>
  got.extend({ prefixUrl, throwHttpErrors: false, retry: { limit: 0 }, timeout: { request: 30_000 } });

/** The ingress of each node on its own (one for a single server). */
function ingresses(stack: Stack): Got[] {
  return (stack.nodes ?? [stack.server]).map((n) => client(n.ingress));
}

const cancelled = (o: Outcome) => o.rejected?.code === 409;

for (const store of nodeKinds) {
  test.serial(`${store}: a handler cancels the 8 calls it started; every one ends cancelled`, async (t) => {
    const stack = t.context[store]!;
    const { ids, outcomes } = await call<{ ids: string[]; outcomes: Outcome[] }>(
      t,
      stack,
      'Canceller/callsThenCancel',
      { tag: `calls-${store}`, n: 8 },
    );
    t.is(ids.length, 8);
    t.true(outcomes.every(cancelled), JSON.stringify(outcomes));
    t.deepEqual(await notCompleted(stack.admin, ids), []);
  });

  test.serial(`${store}: a handler cancels an invocation it did not start, blocked on an awakeable`, async (t) => {
    const stack = t.context[store]!;
    const tag = `other-${store}`;
    const id = await sendTo(stack, 'Blocker/block', tag);
    await waitFor(async () => (await stack.counts())[`${tag}:started`] === 1, 15_000);
    await call(t, stack, 'Canceller/cancel', id);
    for (const ingress of ingresses(stack)) {
      const res = await ingress.get(`restate/attach/${id}`);
      t.is(res.statusCode, 409, res.body);
    }
  });

  // Several at once: on two nodes, some child lands on the other node's partitions.
  test.serial(`${store}: a handler sends, cancels and attaches to the same invocation`, async (t) => {
    const stack = t.context[store]!;
    const outs = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call<Outcome & { id: string }>(t, stack, 'Canceller/sendCancelAttach', `sca-${store}-${i}`),
      ),
    );
    t.true(outs.every(cancelled), JSON.stringify(outs));
    t.deepEqual(
      await notCompleted(
        stack.admin,
        outs.map((o) => o.id),
      ),
      [],
    );
  });

  test.serial(`${store}: attach to runners whose children were cancelled through the admin API`, async (t) => {
    const stack = t.context[store]!;
    const tags = Array.from({ length: 6 }, (_, i) => `tree-${store}-${i}`);
    const runners = await Promise.all(
      tags.map((tag) => sendTo(stack, 'Canceller/attachToLater', { tag, delayMs: 600_000 })),
    );
    // Cancelled once each runner waits for it: an attach to what is gone answers 404 anywhere.
    const attaching = `SELECT DISTINCT id FROM sys_journal WHERE entry_type LIKE '%AttachInvocation' AND id IN (${runners.map((r) => `'${r}'`).join(', ')})`;
    await waitFor(async () => (await sqlRows(stack.admin, attaching)).length === runners.length, 15_000);
    for (const tag of tags) {
      const child = await awaitPublished(stack, tag, 'child');
      t.is((await stack.admin.patch(`invocations/${child}/cancel`)).statusCode, 200);
    }
    for (const runner of runners)
      for (const ingress of ingresses(stack)) {
        const res = await ingress.get(`restate/attach/${runner}`);
        t.is(res.statusCode, 200, res.body);
        t.true(cancelled(JSON.parse(res.body) as Outcome), res.body);
      }
  });

  if (!isMultiNode(store)) continue;

  // The last test of the file on this stack: its second node stays dead. Every test here is
  // serial, so none runs while it is.
  test.serial(`${store}: a SIGKILL of one node in a storm of cancellations loses none`, async (t) => {
    const stack = t.context[store]!;
    const [first, second] = stack.nodes!;
    // Once the second node is dead, only the first is asked.
    const viaFirst = client(first!.ingress);
    const adminFirst = client(first!.admin);
    const tag = `storm-${store}`;
    // Blockers on both nodes' partitions (sends through each node land on its own partitions).
    const blockers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => sendTo(stack, 'Blocker/block', `${tag}-b${i}`)),
    );
    await waitFor(async () => {
      const c = await stack.counts();
      return blockers.every((_, i) => c[`${tag}-b${i}:started`] === 1);
    }, 30_000);
    // Handlers cancelling them and their own calls, through the node that survives, while the
    // other one is killed in the middle.
    const cancels = blockers.map(async (id, i) => {
      await new Promise((r) => setTimeout(r, i * 20));
      const res = await viaFirst.post('restate/send/Canceller/cancel', { json: id });
      t.is(res.statusCode, 202, res.body);
    });
    const storms = Array.from({ length: 6 }, async (_, i) => {
      await new Promise((r) => setTimeout(r, i * 100));
      const res = await viaFirst.post('restate/send/Canceller/callsThenCancel', {
        json: { tag: `${tag}-c${i}`, n: 4 },
      });
      t.is(res.statusCode, 202, res.body);
      return (JSON.parse(res.body) as { invocationId: string }).invocationId;
    });
    await new Promise((r) => setTimeout(r, 250));
    await second!.kill();
    await Promise.all(cancels);
    const runners = await Promise.all(storms);
    // The killed node's partitions fail over to the survivor, whose recovery delivers what is left.
    await waitFor(
      async () => (await notCompleted(adminFirst, [...blockers, ...runners])).length === 0,
      60_000,
      250,
    ).catch(() => undefined);
    t.deepEqual(await notCompleted(adminFirst, [...blockers, ...runners]), [], first!.output().slice(-3000));
    for (const runner of runners) {
      const res = await viaFirst.get(`restate/attach/${runner}`);
      const { outcomes } = JSON.parse(res.body) as { outcomes: Outcome[] };
      t.true(outcomes.every(cancelled), res.body);
    }
  });
}
