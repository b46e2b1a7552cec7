/**
 * Delivery's order between a callee's `invoke` message and a cancel sent after it, against a
 * real (embedded) store: the cancel goes only once the `invoke` message is gone from the
 * sender's outbox, so that no retry or recovery can deliver it again and create the callee the
 * cancel forgot; and when the sending partition leaves this node, what waited for the callee
 * is refused (its next owner delivers both).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { EmbeddedStore } from '../../src/store/embedded/embedded-store.js';
import { Fenced, type OutboxMessage, type Store } from '../../src/store/types.js';
import { Delivery, type DeliveryDeps } from '../../src/runtime/services/delivery.js';
import { RetryScheduler } from '../../src/runtime/services/retry.js';
import { silentLogger } from '../../src/telemetry/log.js';
import type { OutboxBody } from '../../src/model/outbox.js';

const test = anyTest as TestFn<{ store: Store; dir: string }>;

test.beforeEach(async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-delivery-'));
  t.context = { store: await EmbeddedStore.open(dir), dir };
});

test.afterEach.always(async (t) => {
  await t.context.store.close().catch(() => undefined);
  await rm(t.context.dir, { recursive: true, force: true });
});

const SENDER = 3;
const CALLEE = 'inv_callee';

const invoke: OutboxMessage = {
  id: 'm-invoke',
  body: {
    kind: 'invoke',
    invocationId: CALLEE,
    target: { service: 'S', handler: 'h', serviceTy: 'Service' },
    input: '',
    headers: [],
  } satisfies OutboxBody,
};
const cancel: OutboxMessage = {
  id: 'm-cancel',
  body: { kind: 'signal', invocationId: CALLEE, signalId: 1, void: true } as OutboxBody,
};

/** A Delivery whose target operations are recorded; `deliverInvoke` decides when the callee's creation answers. */
function delivery(store: Store, owned: Set<number>, deliverInvoke: () => Promise<void>) {
  const events: string[] = [];
  const deps = {
    store,
    actors: { partitionOf: () => 7 },
    retry: new RetryScheduler(silentLogger, (p) => owned.has(p)),
    placement: { owns: (p: number) => owned.has(p), owned: () => [...owned], forward: () => Promise.resolve() },
    // On the target's owner, a CANCEL signal is an operator cancel: recorded with what the
    // sender's outbox still holds at that moment.
    async onOwner(_target: number, _op: string, m: OutboxMessage) {
      const body = m.body as OutboxBody;
      if (body.kind === 'invoke') {
        await deliverInvoke();
        events.push(`created ${body.invocationId}`);
      } else {
        const left = (await store.outbox(SENDER)).map((o) => o.id);
        events.push(`cancel ${body.invocationId}, outbox: ${left.join(',')}`);
      }
    },
  } as unknown as DeliveryDeps;
  return { d: new Delivery(deps), events };
}

const until = async (f: () => boolean) => {
  while (!f()) await new Promise((r) => setTimeout(r, 5));
};

test('a cancel of a callee sent in the same commit goes once the invoke message is gone from the outbox', async (t) => {
  const { store } = t.context;
  await store.commit({ partition: SENDER, outboxAdd: [invoke, cancel] });
  const { d, events } = delivery(store, new Set([SENDER]), () => Promise.resolve());
  d.deliver(SENDER, [invoke, cancel]);
  await until(() => events.some((e) => e.startsWith('cancel')));
  t.deepEqual(events, [`created ${CALLEE}`, `cancel ${CALLEE}, outbox: m-cancel`]);
  await d.whenCreated(CALLEE);
  t.false(d.isUndelivered(CALLEE));
});

test('the sending partition leaves this node: what waited for the callee is refused, no cancel goes from here', async (t) => {
  const { store } = t.context;
  await store.commit({ partition: SENDER, outboxAdd: [invoke, cancel] });
  const owned = new Set([SENDER]);
  let answer!: () => void;
  const { d, events } = delivery(store, owned, () => new Promise<void>((r) => (answer = r)));
  d.deliver(SENDER, [invoke, cancel]);
  await until(() => answer !== undefined);
  const waiting = d.whenCreated(CALLEE);
  owned.delete(SENDER);
  d.forgetPartition(SENDER);
  const refused = await t.throwsAsync(waiting, { instanceOf: Fenced });
  t.is(refused?.partition, SENDER);
  // The callee's creation answers late: its outbox removal is refused by nobody here (the store
  // does not fence a partition without a lease), yet the cancel was already refused.
  answer();
  await new Promise((r) => setTimeout(r, 50));
  t.false(
    events.some((e) => e.startsWith('cancel')),
    events.join('; '),
  );
  t.false(d.isUndelivered(CALLEE));
});

test("a delivery that outlived its partition's stay does not unmark the one a later recovery started", async (t) => {
  const { store } = t.context;
  await store.commit({ partition: SENDER, outboxAdd: [invoke] });
  const owned = new Set([SENDER]);
  const answers: Array<() => void> = [];
  const { d } = delivery(store, owned, () => new Promise<void>((r) => answers.push(r)));
  d.deliver(SENDER, [invoke]);
  await until(() => answers.length === 1);
  // The partition leaves and comes back; its recovery hands the message in again.
  owned.delete(SENDER);
  d.forgetPartition(SENDER);
  owned.add(SENDER);
  d.deliver(SENDER, [invoke]);
  await until(() => answers.length === 2);
  // The first delivery ends while the second is still on its way.
  answers[0]!();
  await new Promise((r) => setTimeout(r, 50));
  d.deliver(SENDER, [invoke]);
  await new Promise((r) => setTimeout(r, 50));
  t.is(answers.length, 2, 'handed in a third time while the second delivery was on its way');
  answers[1]!();
});
