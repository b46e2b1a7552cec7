/**
 * The one contract every Store backend passes (design.md, "Store"). Each test opens its own
 * fresh store, so tests are independent and run in parallel.
 */
import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { compareUtf8 } from '../../src/store/codec.js';
import {
  HISTORY_LIMIT,
  TransitionConflict,
  type HistoryEntry,
  type JournalEntry,
  type Store,
  type Transition,
} from '../../src/store/types.js';

export interface StoreFixture {
  store: Store;
  /** Closes the store and opens it again on the same data; returns the new store. */
  reopen(): Promise<Store>;
  cleanup(): Promise<void>;
}

type Body = (t: ExecutionContext, store: Store, fixture: StoreFixture) => Promise<void>;

const bytes = (...values: number[]) => Uint8Array.from(values);
const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);
const entry = (type: number, payload: Uint8Array = bytes(type & 0xff)): JournalEntry => ({ type, payload });
const step = (n: number, from: string | null = 'running'): HistoryEntry => ({
  from,
  event: `e${n}`,
  to: 'running',
  at: 1000 + n,
  attempt: n % 3,
});

/** A state map's entries in key order: readState gives no particular order. */
const sortedEntries = (state: Map<string, Uint8Array>) => [...state].sort(([a], [b]) => compareUtf8(a, b));

/** Everything a partition holds, read through the interface, for "nothing changed" checks. */
async function dump(store: Store, p: number, ids: string[], objects: Array<[string, string]>) {
  return {
    invocations: await store.listInvocations(p),
    active: await store.activeInvocations(p),
    snapshots: await Promise.all(ids.map((id) => store.loadInvocation(p, id))),
    journals: await Promise.all(ids.map((id) => store.readJournal(p, id))),
    histories: await Promise.all(ids.map((id) => store.readHistory(p, id))),
    state: await Promise.all(objects.map(([s, k]) => store.readState(p, s, k))),
    timers: await store.dueTimers(p, Number.MAX_SAFE_INTEGER, 1000),
    outbox: await store.outbox(p),
    records: await store.listRecords(p, 'idem'),
  };
}

export function storeContract(name: string, open: () => Promise<StoreFixture>): void {
  const it = (title: string, body: Body) =>
    test(`${name}: ${title}`, async (t) => {
      const fixture = await open();
      try {
        await body(t, fixture.store, fixture);
      } finally {
        await fixture.cleanup();
      }
    });

  it('a fresh store reads as empty', async (t, store) => {
    t.is(await store.loadInvocation(0, 'inv-1'), undefined);
    t.deepEqual(await store.listInvocations(0), []);
    t.deepEqual(await store.activeInvocations(0), []);
    t.deepEqual(await store.readJournal(0, 'inv-1'), []);
    t.is(await store.journalLength(0, 'inv-1'), 0);
    t.deepEqual(await store.readHistory(0, 'inv-1'), []);
    t.deepEqual(await store.readState(0, 'Counter', 'a'), new Map());
    t.is(await store.readStateKey(0, 'Counter', 'a', 'n'), undefined);
    t.deepEqual(await store.dueTimers(0, Date.now(), 10), []);
    t.is(await store.nextTimer(0), undefined);
    t.deepEqual(await store.outbox(0), []);
    t.is(await store.getRecord(0, 'idem', 'k'), undefined);
    t.deepEqual(await store.listRecords(0, 'idem'), []);
    t.is(await store.loadRegistry(), undefined);
    t.is(typeof store.info.location, 'string');
  });

  it('one commit carries every part and each read sees it', async (t, store) => {
    const snapshot = { value: 'running', context: { attempt: 2, name: 'é😀', nested: [1, null, { x: true }] } };
    await store.commit({
      partition: 3,
      invocations: [{ id: 'inv-1', snapshot, active: true }],
      journal: [{ id: 'inv-1', at: 0, entries: [entry(0x0400), entry(0x0c00)] }],
      state: [{ service: 'Counter', key: 'a', ops: [{ op: 'set', key: 'n', value: bytes(7) }] }],
      timersAdd: [{ key: 'sleep/inv-1/2', dueAt: 1000 }],
      outboxAdd: [{ id: 'm1', body: { to: 11, call: 'Greeter/greet' } }],
      records: [{ kind: 'idem', key: 'Greeter/greet/k1', value: { invocationId: 'inv-1' } }],
    });
    t.deepEqual(await store.loadInvocation(3, 'inv-1'), snapshot);
    t.deepEqual(await store.listInvocations(3), ['inv-1']);
    t.deepEqual(await store.activeInvocations(3), ['inv-1']);
    t.deepEqual(await store.readJournal(3, 'inv-1'), [entry(0x0400), entry(0x0c00)]);
    t.is(await store.journalLength(3, 'inv-1'), 2);
    t.deepEqual(await store.readState(3, 'Counter', 'a'), new Map([['n', bytes(7)]]));
    t.deepEqual(await store.readStateKey(3, 'Counter', 'a', 'n'), bytes(7));
    t.deepEqual(await store.nextTimer(3), { key: 'sleep/inv-1/2', dueAt: 1000 });
    t.deepEqual(await store.outbox(3), [{ id: 'm1', body: { to: 11, call: 'Greeter/greet' } }]);
    t.deepEqual(await store.getRecord(3, 'idem', 'Greeter/greet/k1'), { invocationId: 'inv-1' });
    t.deepEqual(await store.listRecords(3, 'idem'), ['Greeter/greet/k1']);
    // Nothing leaks into another partition.
    t.deepEqual(await dump(store, 4, ['inv-1'], [['Counter', 'a']]), {
      invocations: [],
      active: [],
      snapshots: [undefined],
      journals: [[]],
      histories: [[]],
      state: [new Map()],
      timers: [],
      outbox: [],
      records: [],
    });
  });

  it('journal appends keep order; reads start at any index', async (t, store) => {
    await store.commit({ partition: 0, journal: [{ id: 'i', at: 0, entries: [entry(1), entry(2)] }] });
    await store.commit({ partition: 0, journal: [{ id: 'i', at: 2, entries: [entry(3)] }] });
    await store.commit({ partition: 0, journal: [{ id: 'i', at: 3, entries: [] }] });
    await store.commit({ partition: 0, journal: [{ id: 'i', at: 3, entries: [entry(4), entry(5)] }] });
    t.deepEqual(
      (await store.readJournal(0, 'i')).map((e) => e.type),
      [1, 2, 3, 4, 5],
    );
    t.deepEqual(
      (await store.readJournal(0, 'i', 3)).map((e) => e.type),
      [4, 5],
    );
    t.deepEqual(await store.readJournal(0, 'i', 5), []);
    t.deepEqual(await store.readJournal(0, 'i', 99), []);
    t.is(await store.journalLength(0, 'i'), 5);
    await t.throwsAsync(store.readJournal(0, 'i', -1), { instanceOf: RangeError });
  });

  it('journal entries and state values survive byte for byte', async (t, store) => {
    const big = randomBytes(1024 * 1024);
    const entries = [
      entry(0, allBytes),
      entry(0xffff, new Uint8Array(0)),
      entry(0x8001, big),
      entry(0x0d00, bytes(0, 0, 0)),
    ];
    await store.commit({
      partition: 1,
      journal: [{ id: 'bin', at: 0, entries }],
      state: [
        {
          service: 'S',
          key: 'k',
          ops: [
            { op: 'set', key: 'all', value: allBytes },
            { op: 'set', key: 'empty', value: new Uint8Array(0) },
            { op: 'set', key: 'big', value: big },
            { op: 'set', key: 'view', value: allBytes.subarray(10, 20) },
          ],
        },
      ],
    });
    const read = await store.readJournal(1, 'bin');
    t.is(read.length, 4);
    read.forEach((e, i) => {
      t.is(e.type, entries[i]!.type);
      t.true(e.payload instanceof Uint8Array);
      t.true(Buffer.from(e.payload).equals(Buffer.from(entries[i]!.payload)), `entry ${i}`);
    });
    const state = await store.readState(1, 'S', 'k');
    t.deepEqual([...state.keys()].sort(), ['all', 'big', 'empty', 'view']);
    t.true(Buffer.from(state.get('all')!).equals(Buffer.from(allBytes)));
    t.is(state.get('empty')!.byteLength, 0);
    t.true(Buffer.from(state.get('big')!).equals(big));
    t.true(
      Buffer.from((await store.readStateKey(1, 'S', 'k', 'view'))!).equals(Buffer.from(allBytes.subarray(10, 20))),
    );
  });

  it('a journal conflict rejects the whole transition and writes nothing', async (t, store) => {
    await store.commit({
      partition: 2,
      journal: [
        { id: 'a', at: 0, entries: [entry(1)] },
        { id: 'b', at: 0, entries: [entry(1)] },
      ],
    });
    const ids = ['a', 'b', 'c'];
    const objects: Array<[string, string]> = [['S', 'k']];
    const before = await dump(store, 2, ids, objects);
    const doomed = (bAt: number): Transition => ({
      partition: 2,
      deleteInvocations: ['a'],
      invocations: [{ id: 'c', snapshot: { v: 1 }, active: true }],
      journal: [
        { id: 'c', at: 0, entries: [entry(9)] },
        { id: 'b', at: bAt, entries: [entry(9)] },
      ],
      state: [{ service: 'S', key: 'k', ops: [{ op: 'set', key: 'x', value: bytes(1) }] }],
      timersAdd: [{ key: 't', dueAt: 5 }],
      outboxAdd: [{ id: 'm', body: 1 }],
      records: [{ kind: 'idem', key: 'r', value: 1 }],
      history: [{ id: 'b', entries: [step(1)] }],
    });
    for (const at of [0, 2, 7]) {
      const err = await t.throwsAsync(store.commit(doomed(at)), { instanceOf: TransitionConflict });
      t.regex(err?.message ?? '', /\bb\b/);
      t.deepEqual(await dump(store, 2, ids, objects), before, `at ${at}`);
    }
    await store.commit(doomed(1));
    t.deepEqual(await store.listInvocations(2), ['c']);
    t.deepEqual(
      (await store.readJournal(2, 'b')).map((e) => e.type),
      [1, 9],
    );
  });

  it('a record expectation that does not hold rejects the whole transition; one that holds lets it land', async (t, store) => {
    const lock = (holder: string, inbox: string[] = []) => ({ v: 1, value: 'locked', context: { holder, inbox } });
    await store.commit({
      partition: 3,
      records: [{ kind: 'object', key: '["S","k"]', value: lock('a', ['b']), expect: null }],
    });
    const before = await dump(store, 3, ['x'], []);
    const doomed = (expect: unknown): Transition => ({
      partition: 3,
      invocations: [{ id: 'x', snapshot: { v: 1 }, active: true }],
      journal: [{ id: 'x', at: 0, entries: [entry(1)] }],
      timersAdd: [{ key: 't', dueAt: 5 }],
      records: [
        { kind: 'idem', key: 'r', value: 1 },
        { kind: 'object', key: '["S","k"]', value: lock('b'), expect },
      ],
    });
    for (const stale of [null, lock('a'), lock('b'), { ...lock('a', ['b']), v: 2 }]) {
      const err = await t.throwsAsync(store.commit(doomed(stale)), { instanceOf: TransitionConflict });
      t.regex(err?.message ?? '', /object\/\["S","k"\]/);
      t.deepEqual(await dump(store, 3, ['x'], []), before, JSON.stringify(stale));
      t.deepEqual(await store.getRecord(3, 'object', '["S","k"]'), lock('a', ['b']));
    }
    // Read back through the store, the value is the one to expect: JSON round trips exactly.
    await store.commit(doomed(await store.getRecord(3, 'object', '["S","k"]')));
    t.deepEqual(await store.getRecord(3, 'object', '["S","k"]'), lock('b'));
    // Expectations chain within one group of commits: each sees the one before it.
    await Promise.all([
      store.commit({ partition: 3, records: [{ kind: 'object', key: 'n', value: 1, expect: null }] }),
      store.commit({ partition: 3, records: [{ kind: 'object', key: 'n', value: 2, expect: 1 }] }),
    ]);
    t.is(await store.getRecord(3, 'object', 'n'), 2);
  });

  it('appends to one id in one transition chain; a deleted journal counts as empty', async (t, store) => {
    const twice: Transition = {
      partition: 0,
      journal: [
        { id: 'i', at: 0, entries: [entry(1)] },
        { id: 'i', at: 1, entries: [entry(2)] },
      ],
    };
    await store.commit(twice);
    t.deepEqual(
      (await store.readJournal(0, 'i')).map((e) => e.type),
      [1, 2],
    );
    await t.throwsAsync(
      store.commit({
        partition: 0,
        journal: [
          { id: 'i', at: 2, entries: [entry(3)] },
          { id: 'i', at: 2, entries: [entry(4)] },
        ],
      }),
      { instanceOf: TransitionConflict },
    );
    t.is(await store.journalLength(0, 'i'), 2);
    await store.commit({
      partition: 0,
      deleteInvocations: ['i'],
      invocations: [{ id: 'i', snapshot: { again: true }, active: true }],
      journal: [{ id: 'i', at: 0, entries: [entry(7)] }],
    });
    t.deepEqual(
      (await store.readJournal(0, 'i')).map((e) => e.type),
      [7],
    );
    t.deepEqual(await store.loadInvocation(0, 'i'), { again: true });
  });

  it('state set, clear and clearAll, isolated by key, service and partition', async (t, store) => {
    const odd = ['', 'a:b', 'a', 'b:c', 'x/y', '/', ':', 'ключ', '😀', 'nul\0byte', '__proto__', 'k'.repeat(300)];
    const v = (s: string) => Buffer.from(`v:${s}`);
    const ops = odd.map((key) => ({ op: 'set' as const, key, value: v(key) }));
    // ('a:b', 'c') and ('a', 'b:c') would meet under a naive 'service:key' encoding.
    const objects: Array<[string, string]> = [
      ['a:b', 'c'],
      ['a', 'b:c'],
      ['', ''],
      ['S', '/x'],
      ['S/', 'x'],
    ];
    for (const [service, key] of objects) await store.commit({ partition: 6, state: [{ service, key, ops }] });
    await store.commit({
      partition: 7,
      state: [{ service: 'a', key: 'b:c', ops: [{ op: 'set', key: 'only', value: bytes(1) }] }],
    });
    for (const [service, key] of objects) {
      const state = await store.readState(6, service, key);
      t.deepEqual([...state.keys()].sort(), [...odd].sort(), `${service}|${key}`);
      for (const k of odd) t.deepEqual(Buffer.from(state.get(k)!), v(k));
    }
    t.deepEqual([...(await store.readState(7, 'a', 'b:c')).keys()], ['only']);

    await store.commit({
      partition: 6,
      state: [
        {
          service: 'a',
          key: 'b:c',
          ops: [
            { op: 'clear', key: 'a:b' },
            { op: 'clear', key: 'missing' },
          ],
        },
      ],
    });
    t.is(await store.readStateKey(6, 'a', 'b:c', 'a:b'), undefined);
    t.deepEqual(Buffer.from((await store.readStateKey(6, 'a:b', 'c', 'a:b'))!), v('a:b'));

    await store.commit({
      partition: 6,
      state: [{ service: 'a', key: 'b:c', ops: [{ op: 'clearAll' }, { op: 'set', key: 'after', value: bytes(2) }] }],
    });
    t.deepEqual(await store.readState(6, 'a', 'b:c'), new Map([['after', bytes(2)]]));
    t.is((await store.readState(6, 'a:b', 'c')).size, odd.length);
    t.is((await store.readState(7, 'a', 'b:c')).size, 1);
    await store.commit({
      partition: 6,
      state: [{ service: 'a', key: 'b:c', ops: [{ op: 'set', key: 'after', value: bytes(3) }] }],
    });
    t.deepEqual(await store.readStateKey(6, 'a', 'b:c', 'after'), bytes(3));
  });

  it('timers come out earliest first; remove and re-add move them', async (t, store) => {
    await store.commit({
      partition: 1,
      timersAdd: [
        { key: 'c', dueAt: 300 },
        { key: 'a', dueAt: 100 },
        { key: 'b2', dueAt: 200 },
        { key: 'b1', dueAt: 200 },
        { key: 'z', dueAt: 1e13 },
      ],
    });
    await store.commit({ partition: 2, timersAdd: [{ key: 'other', dueAt: 1 }] });
    t.deepEqual(await store.nextTimer(1), { key: 'a', dueAt: 100 });
    t.deepEqual(
      (await store.dueTimers(1, 200, 10)).map((x) => x.key),
      ['a', 'b1', 'b2'],
    );
    t.deepEqual(
      (await store.dueTimers(1, 199.5, 10)).map((x) => x.key),
      ['a'],
    );
    t.deepEqual(await store.dueTimers(1, 1e13, 2), [
      { key: 'a', dueAt: 100 },
      { key: 'b1', dueAt: 200 },
    ]);
    t.deepEqual(await store.dueTimers(1, 99, 10), []);
    t.deepEqual(await store.dueTimers(1, 1000, 0), []);

    await store.commit({
      partition: 1,
      timersRemove: [{ key: 'a' }, { key: 'missing' }],
      timersAdd: [{ key: 'c', dueAt: 50 }],
    });
    t.deepEqual(
      (await store.dueTimers(1, 1e13, 10)).map((x) => [x.key, x.dueAt]),
      [
        ['c', 50],
        ['b1', 200],
        ['b2', 200],
        ['z', 1e13],
      ],
    );
    // Removal happens before addition, so remove + add of one key re-arms it.
    await store.commit({
      partition: 1,
      timersRemove: [{ key: 'b1' }, { key: 'b2' }, { key: 'c' }, { key: 'z' }],
      timersAdd: [{ key: 'b1', dueAt: 7 }],
    });
    t.deepEqual(await store.dueTimers(1, 1e13, 10), [{ key: 'b1', dueAt: 7 }]);
    t.deepEqual(await store.nextTimer(2), { key: 'other', dueAt: 1 });
  });

  it('outbox messages are added, listed by id and removed', async (t, store) => {
    await store.commit({
      partition: 0,
      outboxAdd: [
        { id: 'm2', body: { n: 2 } },
        { id: 'm1', body: 'one' },
        { id: 'm3', body: [3] },
      ],
    });
    t.deepEqual(await store.outbox(0), [
      { id: 'm1', body: 'one' },
      { id: 'm2', body: { n: 2 } },
      { id: 'm3', body: [3] },
    ]);
    await store.commit({ partition: 0, outboxRemove: ['m2', 'nope'], outboxAdd: [{ id: 'm1', body: 'replaced' }] });
    t.deepEqual(await store.outbox(0), [
      { id: 'm1', body: 'replaced' },
      { id: 'm3', body: [3] },
    ]);
    t.deepEqual(await store.outbox(1), []);
  });

  it('records are set, overwritten, deleted and listed per kind', async (t, store) => {
    await store.commit({
      partition: 0,
      records: [
        { kind: 'idem', key: 'b', value: { n: 1 } },
        { kind: 'idem', key: 'a', value: 'x' },
        { kind: 'workflow', key: 'a', value: true },
        { kind: 'idem', key: 'b', value: { n: 2 } },
      ],
    });
    t.deepEqual(await store.listRecords(0, 'idem'), ['a', 'b']);
    t.deepEqual(await store.getRecord(0, 'idem', 'b'), { n: 2 });
    t.is(await store.getRecord(0, 'workflow', 'a'), true);
    t.deepEqual(await store.listRecords(1, 'idem'), []);
    await store.commit({
      partition: 0,
      records: [
        { kind: 'idem', key: 'a', value: null },
        { kind: 'idem', key: 'zz', value: null },
      ],
    });
    t.deepEqual(await store.listRecords(0, 'idem'), ['b']);
    t.is(await store.getRecord(0, 'idem', 'a'), undefined);
    t.deepEqual(await store.listRecords(0, 'workflow'), ['a']);
  });

  it('the active index follows each write; deleteInvocations removes journal and indexes', async (t, store) => {
    await store.commit({
      partition: 0,
      invocations: [
        { id: 'x', snapshot: 1, active: true },
        { id: 'y', snapshot: 2, active: true },
      ],
      journal: [{ id: 'x', at: 0, entries: [entry(1)] }],
    });
    await store.commit({ partition: 0, invocations: [{ id: 'y', snapshot: 3, active: false }] });
    t.deepEqual(await store.listInvocations(0), ['x', 'y']);
    t.deepEqual(await store.activeInvocations(0), ['x']);
    t.is(await store.loadInvocation(0, 'y'), 3);
    await store.commit({ partition: 0, invocations: [{ id: 'y', snapshot: 4, active: true }] });
    t.deepEqual(await store.activeInvocations(0), ['x', 'y']);
    await store.commit({ partition: 0, deleteInvocations: ['x', 'never-existed'] });
    t.deepEqual(await store.listInvocations(0), ['y']);
    t.deepEqual(await store.activeInvocations(0), ['y']);
    t.is(await store.loadInvocation(0, 'x'), undefined);
    t.deepEqual(await store.readJournal(0, 'x'), []);
    t.is(await store.journalLength(0, 'x'), 0);
    await store.commit({ partition: 0, journal: [{ id: 'x', at: 0, entries: [entry(2)] }] });
    t.deepEqual(
      (await store.readJournal(0, 'x')).map((e) => e.type),
      [2],
    );
    // A journal or a timer of an id is not an invocation: only a snapshot is.
    await store.commit({
      partition: 0,
      timersAdd: [
        { key: 'expire|x', owner: 'x', dueAt: 5 },
        { key: 'sleep|y|1', owner: 'y', dueAt: 6 },
      ],
    });
    t.deepEqual(await store.listInvocations(0), ['y']);
    // deleteInvocations leaves timers to timersRemove.
    await store.commit({ partition: 0, deleteInvocations: ['y'] });
    t.deepEqual(await store.listInvocations(0), []);
    t.deepEqual(
      (await store.dueTimers(0, 10, 10)).map((timer) => timer.key),
      ['expire|x', 'sleep|y|1'],
    );
    await store.commit({
      partition: 0,
      timersRemove: [
        { key: 'sleep|y|1', owner: 'y' },
        { key: 'expire|x', owner: 'x' },
      ],
    });
    t.deepEqual(await store.dueTimers(0, 10, 10), []);
  });

  it('history appends keep order, per invocation and partition', async (t, store) => {
    await store.commit({
      partition: 4,
      invocations: [{ id: 'h', snapshot: 1, active: true }],
      history: [{ id: 'h', entries: [step(0, null)] }],
    });
    await store.commit({
      partition: 4,
      history: [
        { id: 'h', entries: [step(1), step(2)] },
        { id: 'other', entries: [step(9)] },
      ],
    });
    await store.commit({
      partition: 4,
      history: [
        { id: 'h', entries: [] },
        { id: 'h', entries: [step(3)] },
      ],
    });
    t.deepEqual(await store.readHistory(4, 'h'), [step(0, null), step(1), step(2), step(3)]);
    t.deepEqual(await store.readHistory(4, 'other'), [step(9)]);
    t.deepEqual(await store.readHistory(5, 'h'), []);
    t.deepEqual(await store.readHistory(4, 'h2'), []);
  });

  it(`history keeps the last ${HISTORY_LIMIT} entries`, async (t, store) => {
    const all = Array.from({ length: HISTORY_LIMIT + 60 }, (_, n) => step(n));
    await store.commit({ partition: 0, history: [{ id: 'long', entries: all.slice(0, 150) }] });
    t.is((await store.readHistory(0, 'long')).length, 150);
    await store.commit({ partition: 0, history: [{ id: 'long', entries: all.slice(150, HISTORY_LIMIT + 50) }] });
    t.deepEqual(await store.readHistory(0, 'long'), all.slice(50, HISTORY_LIMIT + 50));
    for (let n = HISTORY_LIMIT + 50; n < all.length; n++)
      await store.commit({ partition: 0, history: [{ id: 'long', entries: [all[n]!] }] });
    t.deepEqual(await store.readHistory(0, 'long'), all.slice(60));
  });

  it('history goes with deleteInvocations; a recreated id starts a new one', async (t, store) => {
    await store.commit({
      partition: 1,
      invocations: [{ id: 'x', snapshot: 1, active: false }],
      history: [{ id: 'x', entries: [step(0, null), step(1)] }],
    });
    await store.commit({ partition: 1, deleteInvocations: ['x'] });
    t.deepEqual(await store.readHistory(1, 'x'), []);
    await store.commit({
      partition: 1,
      invocations: [{ id: 'x', snapshot: 2, active: true }],
      history: [{ id: 'x', entries: [step(5)] }],
    });
    await store.commit({
      partition: 1,
      deleteInvocations: ['x'],
      invocations: [{ id: 'x', snapshot: 3, active: true }],
      history: [{ id: 'x', entries: [step(7, null)] }],
    });
    t.deepEqual(await store.readHistory(1, 'x'), [step(7, null)]);
  });

  it('the registry is saved and loaded whole', async (t, store) => {
    await store.saveRegistry({ deployments: [{ id: 'dp_1', uri: 'http://localhost:9080' }], services: {} });
    await store.saveRegistry({ deployments: [], services: { Greeter: { revision: 2 } } });
    t.deepEqual(await store.loadRegistry(), { deployments: [], services: { Greeter: { revision: 2 } } });
  });

  it('malformed transitions are refused before anything is written', async (t, store) => {
    const bad: Transition[] = [
      { partition: -1, timersAdd: [{ key: 't', dueAt: 1 }] },
      { partition: 1.5, timersAdd: [{ key: 't', dueAt: 1 }] },
      { partition: 0, timersAdd: [{ key: 't', dueAt: Number.NaN }] },
      { partition: 0, timersAdd: [{ key: 't', dueAt: 1 }], journal: [{ id: 'i', at: -1, entries: [] }] },
      { partition: 0, timersAdd: [{ key: 't', dueAt: 1 }], journal: [{ id: 'i', at: 0, entries: [entry(0x10000)] }] },
      {
        partition: 0,
        timersAdd: [{ key: 't', dueAt: 1 }],
        invocations: [{ id: 'i', snapshot: undefined, active: true }],
      },
    ];
    for (const transition of bad) {
      const err = await t.throwsAsync(store.commit(transition));
      t.false(err instanceof TransitionConflict);
    }
    t.is(await store.nextTimer(0), undefined);
    t.deepEqual(await store.listInvocations(0), []);
  });

  it('500 commits issued in one turn all land', async (t, store) => {
    const commits: Array<Promise<void>> = [];
    for (let i = 0; i < 500; i++) {
      commits.push(
        store.commit({
          partition: i % 8,
          invocations: [{ id: `inv-${i}`, snapshot: { i }, active: i % 2 === 0 }],
          journal: [{ id: `inv-${i}`, at: 0, entries: [entry(i & 0xffff, Buffer.from(`payload ${i}`))] }],
          timersAdd: [{ key: `t-${i}`, dueAt: i }],
        }),
      );
    }
    // A conflicting commit in the same batch fails alone.
    const conflicting = t.throwsAsync(
      store.commit({
        partition: 0,
        invocations: [{ id: 'ghost', snapshot: 0, active: true }],
        journal: [{ id: 'none', at: 3, entries: [] }],
      }),
      { instanceOf: TransitionConflict },
    );
    // Commits on one invocation issued in order in one turn apply in that order.
    for (let n = 0; n < 20; n++)
      commits.push(store.commit({ partition: 9, journal: [{ id: 'seq', at: n, entries: [entry(n)] }] }));
    await Promise.all(commits);
    await conflicting;
    let total = 0;
    for (let p = 0; p < 8; p++) total += (await store.listInvocations(p)).length;
    t.is(total, 500);
    t.deepEqual(await store.loadInvocation(7, 'inv-495'), { i: 495 });
    t.deepEqual(await store.readJournal(3, 'inv-499'), [entry(499, Uint8Array.from(Buffer.from('payload 499')))]);
    t.is((await store.activeInvocations(0)).length, 63);
    t.is(await store.loadInvocation(0, 'ghost'), undefined);
    t.deepEqual(
      (await store.readJournal(9, 'seq')).map((e) => e.type),
      Array.from({ length: 20 }, (_, n) => n),
    );
  });

  it('lone commits and groups of commits interleave across turns, each durable and in order', async (t, store) => {
    const commits: Array<Promise<void>> = [];
    for (let n = 0; n < 60; n++) {
      // 1, 2 or 3 commits per turn, the next turn starting while earlier ones may be in flight.
      for (let k = 0; k < (n % 3) + 1; k++) {
        commits.push(store.commit({ partition: 1, invocations: [{ id: `i-${n}-${k}`, snapshot: n, active: true }] }));
      }
      commits.push(store.commit({ partition: 2, journal: [{ id: 'log', at: n, entries: [entry(n)] }] }));
      if (n % 4 === 0) await commits.at(-1);
      else await new Promise((r) => setImmediate(r));
    }
    await Promise.all(commits);
    t.is((await store.activeInvocations(1)).length, 120);
    t.deepEqual(
      (await store.readJournal(2, 'log')).map((e) => e.type),
      Array.from({ length: 60 }, (_, n) => n),
    );
  });

  it('everything committed is still there after reopening', async (t, _store, fixture) => {
    let store = fixture.store;
    await store.commit({
      partition: 5,
      invocations: [
        { id: 'keep', snapshot: { s: 'suspended' }, active: true },
        { id: 'done', snapshot: { s: 'completed' }, active: false },
      ],
      journal: [{ id: 'keep', at: 0, entries: [entry(0x0400, allBytes)] }],
      state: [{ service: 'Obj', key: 'k:1', ops: [{ op: 'set', key: 's', value: allBytes }] }],
      timersAdd: [{ key: 'wake', dueAt: 42 }],
      outboxAdd: [{ id: 'o', body: { to: 1 } }],
      records: [{ kind: 'promise', key: 'p', value: { resolved: 'yes' } }],
      history: [{ id: 'keep', entries: [step(0, null), step(1)] }],
    });
    await store.saveRegistry({ v: 1 });
    const before = await dump(store, 5, ['keep', 'done'], [['Obj', 'k:1']]);
    store = await fixture.reopen();
    t.deepEqual(await dump(store, 5, ['keep', 'done'], [['Obj', 'k:1']]), before);
    t.deepEqual(await store.activeInvocations(5), ['keep']);
    t.deepEqual(await store.getRecord(5, 'promise', 'p'), { resolved: 'yes' });
    t.deepEqual(await store.loadRegistry(), { v: 1 });
    t.is(await store.journalLength(5, 'keep'), 1);
    await store.commit({ partition: 5, journal: [{ id: 'keep', at: 1, entries: [entry(1)] }] });
    t.is(await store.journalLength(5, 'keep'), 2);
  });

  // The embedded store remembers where each journal and history ends (store/embedded/positions.ts):
  // what it remembers must follow exactly what landed.
  it('appends go where the journal and history end: after a refused commit in the same turn, a completion, a reopening, a deletion', async (t, _store, fixture) => {
    let store = fixture.store;
    const commitAt = (at: number, n: number, extra: Partial<Transition> = {}) =>
      store.commit({
        partition: 3,
        journal: [{ id: 'p', at, entries: [entry(n)] }],
        history: [{ id: 'p', entries: [step(n)] }],
        ...extra,
      });
    await commitAt(0, 0, { invocations: [{ id: 'p', snapshot: 0, active: true }] });
    // One turn: the refused commit in the middle moves nothing for the one after it.
    const turn = await Promise.allSettled([commitAt(1, 1), commitAt(1, 90), commitAt(2, 2)]);
    t.deepEqual(
      turn.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    t.true(turn[1]?.status === 'rejected' && turn[1].reason instanceof TransitionConflict);
    await t.throwsAsync(commitAt(2, 91), { instanceOf: TransitionConflict });
    await commitAt(3, 3, { invocations: [{ id: 'p', snapshot: 3, active: false }] });
    await commitAt(4, 4);
    store = await fixture.reopen();
    await t.throwsAsync(commitAt(4, 92), { instanceOf: TransitionConflict });
    await commitAt(5, 5);
    t.deepEqual(
      (await store.readJournal(3, 'p')).map((e) => e.type),
      [0, 1, 2, 3, 4, 5],
    );
    t.deepEqual(
      (await store.readHistory(3, 'p')).map((h) => h.event),
      ['e0', 'e1', 'e2', 'e3', 'e4', 'e5'],
    );
    await store.commit({ partition: 3, deleteInvocations: ['p'] });
    await t.throwsAsync(commitAt(6, 93), { instanceOf: TransitionConflict });
    await commitAt(0, 6);
    t.deepEqual(
      (await store.readJournal(3, 'p')).map((e) => e.type),
      [6],
    );
    t.deepEqual(
      (await store.readHistory(3, 'p')).map((h) => h.event),
      ['e6'],
    );
  });

  // Restate accepts object keys and state keys of any length; LMDB keys stop at 1,978 bytes.
  it('keys far longer than an LMDB key are stored, read, listed and removed', async (t, _store, fixture) => {
    let store = fixture.store;
    const objectKey = `k\0${'é'.repeat(2500)}`;
    const otherKey = `${'k'.repeat(1900)}-2`;
    const field = `f${'x'.repeat(3000)}`;
    const record = JSON.stringify(['Obj', objectKey]);
    await store.commit({
      partition: 2,
      invocations: [{ id: 'inv-long', snapshot: { key: objectKey }, active: true }],
      journal: [{ id: 'inv-long', at: 0, entries: [entry(0x0400)] }],
      state: [
        {
          service: 'Obj',
          key: objectKey,
          ops: [
            { op: 'set', key: field, value: bytes(1) },
            { op: 'set', key: 'short', value: bytes(2) },
          ],
        },
        { service: 'Obj', key: otherKey, ops: [{ op: 'set', key: field, value: bytes(3) }] },
      ],
      timersAdd: [{ key: `wake|${objectKey}`, dueAt: 5 }],
      outboxAdd: [{ id: `m|${objectKey}`, body: { to: objectKey } }],
      records: [
        { kind: 'object', key: record, value: { holder: 'inv-long' } },
        { kind: 'object', key: 'a-short-one', value: 1 },
        { kind: 'object', key: `${record}-2`, value: 2 },
      ],
    });
    const check = async (s: Store) => {
      t.deepEqual(
        sortedEntries(await s.readState(2, 'Obj', objectKey)),
        sortedEntries(
          new Map([
            [field, bytes(1)],
            ['short', bytes(2)],
          ]),
        ),
      );
      t.deepEqual(await s.readStateKey(2, 'Obj', objectKey, field), bytes(1));
      t.deepEqual(await s.readState(2, 'Obj', otherKey), new Map([[field, bytes(3)]]));
      t.deepEqual(await s.getRecord(2, 'object', record), { holder: 'inv-long' });
      t.deepEqual(await s.listRecords(2, 'object'), [record, `${record}-2`, 'a-short-one'].sort(compareUtf8));
      t.deepEqual(await s.nextTimer(2), { key: `wake|${objectKey}`, dueAt: 5 });
      t.deepEqual(await s.outbox(2), [{ id: `m|${objectKey}`, body: { to: objectKey } }]);
    };
    await check(store);
    store = await fixture.reopen();
    await check(store);
    await store.commit({
      partition: 2,
      state: [
        { service: 'Obj', key: objectKey, ops: [{ op: 'clear', key: field }] },
        { service: 'Obj', key: otherKey, ops: [{ op: 'clearAll' }] },
      ],
      timersRemove: [{ key: `wake|${objectKey}` }],
      outboxRemove: [`m|${objectKey}`],
      records: [{ kind: 'object', key: record, value: null }],
    });
    t.deepEqual(await store.readState(2, 'Obj', objectKey), new Map([['short', bytes(2)]]));
    t.is(await store.readStateKey(2, 'Obj', objectKey, field), undefined);
    t.deepEqual(await store.readState(2, 'Obj', otherKey), new Map());
    t.is(await store.getRecord(2, 'object', record), undefined);
    t.deepEqual(await store.listRecords(2, 'object'), [`${record}-2`, 'a-short-one'].sort(compareUtf8));
    t.is(await store.nextTimer(2), undefined);
    t.deepEqual(await store.outbox(2), []);
  });
}
