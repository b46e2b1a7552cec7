/**
 * The runtime's kernel on its own: invocation actors stepped through commits against a real
 * (embedded) store, with no SDK process. What each commit stores, which effects follow it,
 * and what happens when a commit's outcome is unknown.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import type { InvocationContext, InvocationInput } from '../../machines/invocation.js';
import { encodeInputCommand, encodeNotification, MessageType } from '../../src/protocol/messages.js';
import { invocationIdToString, newInvocationId, partitionKeyOf } from '../../src/protocol/ids.js';
import { EmbeddedStore } from '../../src/store/embedded/embedded-store.js';
import type { Store, Transition } from '../../src/store/types.js';
import {
  InvocationActor,
  type ActorPorts,
  type AttemptHandle,
  type Committed,
} from '../../src/runtime/kernel/invocation-actor.js';
import { ObjectLocks } from '../../src/runtime/kernel/object-keys.js';
import { Limiters } from '../../src/runtime/kernel/limiters.js';
import { ActorRetired } from '../../src/runtime/kernel/retired.js';
import { objectRecordKey, readInvocation, readObjectKey, RecordKind } from '../../src/model/persisted.js';
import { partitionOf } from '../../src/model/partitioning.js';
import { timerOf } from '../../src/model/timers.js';

const PARTITIONS = 24;

/** What the kernel asked of the runtime around it, recorded instead of done. */
interface Recorded {
  locks: ObjectLocks;
  attempts: Array<{ context: InvocationContext; calls: string[] }>;
  committed: Array<{ id: string; done: Committed }>;
  lockRequests: string[];
  lostIds: string[];
}

function recordingPorts(store: Store): { ports: ActorPorts; rec: Recorded } {
  const rec: Recorded = { locks: new ObjectLocks(store), attempts: [], committed: [], lockRequests: [], lostIds: [] };
  const ports: ActorPorts = {
    store,
    locks: rec.locks,
    limiters: new Limiters({
      store,
      rules: () => [],
      now: () => 5_000,
      granted: () => undefined,
      lost: () => undefined,
    }),
    now: () => 5_000,
    newAttempt(_actor, context): AttemptHandle {
      const calls: string[] = [];
      rec.attempts.push({ context, calls });
      return {
        start: () => calls.push('start'),
        flush: () => calls.push('flush'),
        close: () => calls.push('close'),
        abort: (r) => calls.push(`abort:${r}`),
      };
    },
    committed: (actor, done) => void rec.committed.push({ id: actor.id, done }),
    requestLock: (actor) => void rec.lockRequests.push(actor.id),
    requestSlot: () => undefined,
    lost: (actor) => void rec.lostIds.push(actor.id),
  };
  return { ports, rec };
}

const test = anyTest as TestFn<{ store: Store; dir: string; rec: Recorded; ports: ActorPorts }>;

test.beforeEach(async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-kernel-'));
  const store = await EmbeddedStore.open(dir);
  t.context = { store, dir, ...recordingPorts(store) };
});

test.afterEach.always(async (t) => {
  await t.context.store.close().catch(() => undefined);
  await rm(t.context.dir, { recursive: true, force: true });
});

const retryPolicy = {
  initialInterval: 100,
  exponentiationFactor: 2,
  maxAttempts: 3,
  maxInterval: 1000,
  onMaxAttempts: 'Kill' as const,
};
const inputEntry = (text: string) => ({
  type: MessageType.InputCommand,
  payload: encodeInputCommand({ headers: [], value: Buffer.from(text), name: '' }),
});

function input(over: Partial<InvocationInput> = {}): { input: InvocationInput; partition: number } {
  const key = over.target?.key;
  const id = over.id ?? invocationIdToString(newInvocationId(partitionKeyOf(key ?? 'k')));
  const base: InvocationInput = {
    id,
    target: { service: 'S', handler: 'h', serviceTy: 'Service' },
    invokedBy: 'ingress',
    retryPolicy,
    completionRetention: 60_000,
    now: 1_000,
  };
  return { input: { ...base, ...over, id }, partition: partitionOf(partitionKeyOf(key ?? 'k'), PARTITIONS) };
}

test('creating commits the snapshot and the Input entry, then starts an attempt with the committed context', async (t) => {
  const { store, rec, ports } = t.context;
  const { input: i, partition } = input();
  const actor = await InvocationActor.create(ports, partition, i, [inputEntry('"hi"')]);

  const stored = readInvocation(await store.loadInvocation(partition, i.id));
  t.is(stored.v, 1);
  t.is(stored.value, 'running');
  // Stamped with the time of the commit (sys_journal.appended_at).
  t.deepEqual(await store.readJournal(partition, i.id), [{ ...inputEntry('"hi"'), appendedAt: ports.now() }]);
  t.deepEqual(await store.activeInvocations(partition), [i.id]);
  t.is(rec.attempts.length, 1);
  t.deepEqual(rec.attempts[0]!.calls, ['start']);
  t.is(rec.attempts[0]!.context.id, i.id);
  t.is(actor.attempt !== undefined, true);
});

test('a notification that satisfies a suspension wakes it in the same commit', async (t) => {
  const { store, rec, ports } = t.context;
  const { input: i, partition } = input();
  const actor = await InvocationActor.create(ports, partition, i, [inputEntry('1')]);
  await actor.run(() =>
    actor.commit({
      events: [{ type: 'suspend', awaiting: { completions: [1], signals: [], namedSignals: [] }, now: 2_000 }],
    }),
  );
  t.is(readInvocation(await store.loadInvocation(partition, i.id)).value, 'suspended');
  t.deepEqual(
    rec.attempts[0]!.calls,
    ['start', 'flush', 'close'],
    'the attempt is released when the invocation suspends',
  );

  const sleepDone = {
    type: MessageType.SleepCompletionNotification,
    payload: encodeNotification({ completionId: 1, void: true }),
  };
  await actor.run(() => actor.commit({ entries: [sleepDone] }));
  t.is(readInvocation(await store.loadInvocation(partition, i.id)).value, 'running');
  t.is((await store.readJournal(partition, i.id)).length, 2);
  t.is(rec.attempts.length, 2, 'a new attempt replays the journal');
  t.deepEqual(rec.attempts[1]!.calls, ['start']);
});

test('completing a called invocation writes the result for its caller and the expiry timer in one commit', async (t) => {
  const { store, ports, rec } = t.context;
  const caller = { invocationId: 'inv_caller', completionId: 3 };
  const { input: i, partition } = input({ caller });
  const actor = await InvocationActor.create(ports, partition, i, [inputEntry('1')]);
  await actor.run(() =>
    actor.commit({
      events: [{ type: 'complete', completion: { ok: Buffer.from('"done"').toString('base64') }, now: 3_000 }],
    }),
  );

  const outbox = await store.outbox(partition);
  t.deepEqual(outbox, [
    {
      id: `${i.id}:result`,
      body: {
        kind: 'complete',
        invocationId: 'inv_caller',
        completionId: 3,
        value: Buffer.from('"done"').toString('base64'),
      },
    },
  ]);
  t.deepEqual(await store.dueTimers(partition, Number.MAX_SAFE_INTEGER, 10), [
    { key: timerOf.expire(i.id).key, dueAt: 3_000 + 60_000 },
  ]);
  t.deepEqual(await store.activeInvocations(partition), []);
  const last = rec.committed.at(-1)!.done;
  t.deepEqual(
    last.effects.map((e) => e.type),
    ['releaseLock', 'respond', 'armTimer'],
  );
  t.is(last.outbox.length, 1, 'the committed messages are handed on for delivery');
});

test('an exclusive invocation passes its key on in the commit that completes it', async (t) => {
  const { store, ports, rec } = t.context;
  const target = { service: 'Obj', handler: 'add', serviceTy: 'VirtualObject' as const, key: 'k1' };
  const first = input({ target, exclusive: true });
  const second = input({ target, exclusive: true });
  const lock = await rec.locks.get(first.partition, 'Obj', 'k1');
  const create = (x: ReturnType<typeof input>) =>
    lock.run(() =>
      lock.change({ type: 'acquire', invocationId: x.input.id }, (c) =>
        InvocationActor.create(
          ports,
          x.partition,
          { ...x.input, lockHeld: c.granted.includes(x.input.id) },
          [inputEntry('1')],
          { records: [c.record] },
        ).then((a) => void actors.set(x.input.id, a)),
      ),
    );
  const actors = new Map<string, InvocationActor>();
  await create(first);
  await create(second);
  t.is(actors.get(first.input.id)!.status, 'running');
  t.is(actors.get(second.input.id)!.status, 'pending');

  const a = actors.get(first.input.id)!;
  await a.run(() => a.commit({ events: [{ type: 'complete', completion: { ok: '' }, now: 4_000 }] }));
  const record = readObjectKey(
    await store.getRecord(first.partition, RecordKind.objectKey, objectRecordKey('Obj', 'k1')),
  );
  t.is(record.context.holder, second.input.id);
  t.deepEqual(record.context.inbox, []);
  t.deepEqual(rec.committed.at(-1)!.done.granted, [second.input.id]);
});

test('a lock grant is applied in memory and stored with the next commit', async (t) => {
  const { store, ports } = t.context;
  const target = { service: 'Obj', handler: 'add', serviceTy: 'VirtualObject' as const, key: 'k2' };
  const { input: i, partition } = input({ target, exclusive: true });
  const actor = await InvocationActor.create(ports, partition, i, [inputEntry('1')]);
  t.is(actor.status, 'pending');
  await actor.run(async () => actor.applyStoredElsewhere({ type: 'lockGranted', now: 2_000 }));
  t.is(actor.status, 'running');
  t.is(readInvocation(await store.loadInvocation(partition, i.id)).value, 'pending', 'not stored by itself');
  await actor.run(() => actor.commit({ entries: [{ type: MessageType.RunCommand, payload: new Uint8Array() }] }));
  t.is(readInvocation(await store.loadInvocation(partition, i.id)).value, 'running');
});

test('a commit that fails leaves the actor unusable and reports it lost; the store keeps the last committed state', async (t) => {
  const { store, ports, rec } = t.context;
  const { input: i, partition } = input();
  const actor = await InvocationActor.create(ports, partition, i, [inputEntry('1')]);
  // Another writer appended behind this actor's back: its next append conflicts.
  const foreign: Transition = { partition, journal: [{ id: i.id, at: 1, entries: [inputEntry('x')] }] };
  await store.commit(foreign);
  await t.throwsAsync(
    actor.run(() => actor.commit({ entries: [{ type: MessageType.RunCommand, payload: new Uint8Array() }] })),
  );
  t.true(actor.isBroken);
  t.deepEqual(rec.lostIds, [i.id]);
  t.true(
    rec.attempts[0]!.calls.some((c) => c.startsWith('abort:')),
    'its attempt is aborted',
  );
  // A job queued behind the failed commit is refused, to be run on the actor loaded in its place (ActorCache.with).
  await t.throwsAsync(
    actor.run(() => actor.commit({ events: [{ type: 'pause', now: 1 }] })),
    { instanceOf: ActorRetired },
  );
  t.is(readInvocation(await store.loadInvocation(partition, i.id)).value, 'running');
});

test('an actor restored from the store carries on where it was; snapshots without a version are read as version 1', async (t) => {
  const { store, ports } = t.context;
  const { input: i, partition } = input();
  const actor = await InvocationActor.create(ports, partition, i, [inputEntry('1')]);
  await actor.run(() => actor.commit({ events: [{ type: 'pause', now: 2_000 }] }));
  const { v: _v, ...unversioned } = readInvocation(await store.loadInvocation(partition, i.id));
  const restored = InvocationActor.restore(
    ports,
    partition,
    readInvocation(unversioned),
    await store.readJournal(partition, i.id),
  );
  t.is(restored.status, 'paused');
  t.is(restored.journal.length, 1);
  await restored.run(() => restored.commit({ events: [{ type: 'resume', now: 3_000 }] }));
  t.is(readInvocation(await store.loadInvocation(partition, i.id)).value, 'running');
  t.throws(() => readInvocation({ v: 99, value: 'running', context: {} }), { message: /version 99/ });
});

test('resume redoes what the committed state asks for: an attempt, a lock request, or a wake', async (t) => {
  const { store, ports, rec } = t.context;
  const running = input();
  await InvocationActor.create(ports, running.partition, running.input, [inputEntry('1')]);
  const pending = input({
    target: { service: 'Obj', handler: 'add', serviceTy: 'VirtualObject', key: 'k3' },
    exclusive: true,
  });
  await InvocationActor.create(ports, pending.partition, pending.input, [inputEntry('1')]);
  const before = rec.attempts.length;
  for (const x of [running, pending]) {
    const restored = InvocationActor.restore(
      ports,
      x.partition,
      readInvocation(await store.loadInvocation(x.partition, x.input.id)),
      await store.readJournal(x.partition, x.input.id),
    );
    await restored.run(() => restored.resume());
  }
  t.is(rec.attempts.length, before + 1, 'the running one gets a new attempt');
  t.deepEqual(rec.lockRequests, [pending.input.id], 'the pending one queues for its key again');
});

test('a lock change queued behind one whose commit failed runs on the lock read again from the store', async (t) => {
  const { store, rec } = t.context;
  const partition = partitionOf(partitionKeyOf('k1'), PARTITIONS);
  // The first change's commit fails (its outcome unknown); the second was queued behind it.
  const failing = rec.locks.with(partition, 'Counter', 'k1', (lock) =>
    lock.change({ type: 'acquire', invocationId: 'inv-a' }, () => Promise.reject(new Error('reply lost'))),
  );
  const queued = rec.locks.with(partition, 'Counter', 'k1', (lock) =>
    lock.change({ type: 'acquire', invocationId: 'inv-b' }, (c) => store.commit({ partition, records: [c.record] })),
  );
  await t.throwsAsync(failing, { message: 'reply lost' });
  const change = await queued;
  t.deepEqual(change.granted, ['inv-b'], 'the store held no holder: the key is free for the queued one');
  t.is(
    readObjectKey(await store.getRecord(partition, RecordKind.objectKey, objectRecordKey('Counter', 'k1'))).context
      .holder,
    'inv-b',
  );
});

test('overlapping lock changes are computed one from the other and handed to the store before the first answers', async (t) => {
  const { store, rec } = t.context;
  const partition = partitionOf(partitionKeyOf('k2'), PARTITIONS);
  const events: string[] = [];
  let answerFirst!: () => void;
  const firstAnswered = new Promise<void>((resolve) => (answerFirst = resolve));
  const first = rec.locks.with(
    partition,
    'Counter',
    'k2',
    (lock) =>
      lock.change({ type: 'acquire', invocationId: 'inv-a' }, async (c) => {
        events.push('a handed over');
        const stored = store.commit({ partition, records: [c.record] });
        await firstAnswered;
        await stored;
        events.push('a stored');
      }),
    undefined,
    true,
  );
  const second = rec.locks.with(
    partition,
    'Counter',
    'k2',
    (lock) =>
      lock.change({ type: 'acquire', invocationId: 'inv-b' }, async (c) => {
        events.push('b handed over');
        await store.commit({ partition, records: [c.record] });
        events.push('b stored');
      }),
    undefined,
    true,
  );
  // A job without overlap reads the lock only once both are stored.
  const holder = rec.locks.with(partition, 'Counter', 'k2', async (lock) => {
    events.push('read');
    return lock.holder;
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.deepEqual(events.slice(0, 2), ['a handed over', 'b handed over'], 'the second change did not wait for the first');
  answerFirst();
  t.deepEqual((await first).granted, ['inv-a']);
  t.deepEqual((await second).granted, [], 'computed from the first: it joins the inbox');
  t.is(await holder, 'inv-a');
  t.is(events.indexOf('read'), 4, `read after both were stored: ${events.join(', ')}`);
  const stored = readObjectKey(
    await store.getRecord(partition, RecordKind.objectKey, objectRecordKey('Counter', 'k2')),
  );
  t.is(stored.context.holder, 'inv-a');
  t.deepEqual(stored.context.inbox, ['inv-b']);
});

test('an overlapping lock change computed from one whose commit failed runs again on the lock read back from the store', async (t) => {
  const { store, rec } = t.context;
  const partition = partitionOf(partitionKeyOf('k3'), PARTITIONS);
  let failFirst!: () => void;
  const firstFails = new Promise<void>((_, reject) => (failFirst = () => reject(new Error('reply lost'))));
  const first = rec.locks.with(
    partition,
    'Counter',
    'k3',
    (lock) => lock.change({ type: 'acquire', invocationId: 'inv-a' }, () => firstFails),
    undefined,
    true,
  );
  let tries = 0;
  const second = rec.locks.with(
    partition,
    'Counter',
    'k3',
    (lock) =>
      lock.change({ type: 'acquire', invocationId: 'inv-b' }, (c) => {
        tries++;
        // The first try expects the first change's record, which never reached the store.
        return store.commit({ partition, records: [c.record] });
      }),
    undefined,
    true,
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  failFirst();
  await t.throwsAsync(first, { message: 'reply lost' });
  t.deepEqual((await second).granted, ['inv-b'], 'the store held no holder: the key is free for the second');
  t.is(tries, 2, 'refused once, then run again');
  t.is(
    readObjectKey(await store.getRecord(partition, RecordKind.objectKey, objectRecordKey('Counter', 'k3'))).context
      .holder,
    'inv-b',
  );
});
