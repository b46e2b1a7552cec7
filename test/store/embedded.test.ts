import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EmbeddedStore } from '../../src/store/embedded/embedded-store.js';
import { readCommitLog } from '../../src/store/embedded/commit-log.js';
import { open } from 'lmdb';
import {
  decodeTuple,
  hasHashedPart,
  MAX_KEY_BYTES,
  prefixRange,
  storedKey,
  tupleKey,
} from '../../src/store/embedded/tuple.js';
import { encodeEntry } from '../../src/store/codec.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { storeContract } from './contract.js';

storeContract('embedded', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-embedded-'));
  let store: Store = await EmbeddedStore.open(dir);
  return {
    store,
    async reopen() {
      await store.close();
      store = await EmbeddedStore.open(dir);
      return store;
    },
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

test('openStore without a Redis URL opens the embedded store, with no warnings', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-embedded-'));
  const store = await openStore({ dataDir: join(dir, '.redstate') });
  try {
    t.is(store.info.backend, 'embedded');
    t.is(store.info.location, join(dir, '.redstate'));
    t.deepEqual(store.info.warnings, []);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('tuple keys sort as tuples and never collide across element boundaries', (t) => {
  const tuples: Array<Array<string | number>> = [
    [0, 'a'],
    [0, 'a', 'b'],
    [0, 'a\0'],
    [0, 'a\0b'],
    [0, 'a\u0001'],
    [0, 'ab'],
    [0, 'é'],
    [0, '😀'],
    [1, -1e300],
    [1, -1],
    [1, 0],
    [1, 0.5],
    [1, 2],
    [1, 1e13],
    [1, Infinity],
    [2, ''],
    [2, '', ''],
  ];
  const keys = tuples.map((parts) => tupleKey(...parts));
  const sorted = [...keys].sort(Buffer.compare);
  t.deepEqual(
    sorted.map((k) => decodeTuple(k)),
    tuples,
  );
  t.is(new Set(keys.map((k) => k.toString('hex'))).size, keys.length);
  const long = 'x'.repeat(100);
  t.notDeepEqual(tupleKey(`${long}\0${long}`), tupleKey(long, long));
  const { start, end } = prefixRange(0, 'a');
  const inside = keys
    .filter((k) => Buffer.compare(k, start) >= 0 && Buffer.compare(k, end) < 0)
    .map((k) => decodeTuple(k));
  t.deepEqual(inside, [
    [0, 'a'],
    [0, 'a', 'b'],
  ]);
});

test('a string that would take a key past the LMDB limit is hashed; shorter keys keep their encoding', (t) => {
  const short = storedKey(0, 'Obj', 'k'.repeat(1800), 'f');
  t.is(short.original, undefined);
  t.deepEqual(decodeTuple(short.key), [0, 'Obj', 'k'.repeat(1800), 'f']);
  const long = storedKey(0, 'Obj', 'k'.repeat(5000), 'f');
  t.true(long.key.length <= MAX_KEY_BYTES);
  t.true(hasHashedPart(long.key));
  t.deepEqual(decodeTuple(long.original!), [0, 'Obj', 'k'.repeat(5000), 'f']);
  // The prefix range of the object key covers its fields, hashed or not.
  const { start, end } = prefixRange(0, 'Obj', 'k'.repeat(5000));
  t.true(Buffer.compare(long.key, start) > 0 && Buffer.compare(long.key, end) < 0);
  t.notDeepEqual(storedKey(0, 'Obj', 'k'.repeat(5000) + 'x').key, long.key);
  t.false(hasHashedPart(tupleKey(3, 0x0303, '\u0003')));
});

test('keys keep their bytes on disk: the encoding of stores written by earlier versions', (t) => {
  // Written by the encoder of 0.1 (a buffer per part, concatenated); the single-pass one must agree.
  t.is(tupleKey(17, 'inv_1abc', 0).toString('hex'), '15c03100000000000002696e765f3161626300158000000000000000');
  t.is(tupleKey(-1.5, '\u00e9\u0000x', 0x0303).toString('hex'), '154007ffffffffffff02c3a900ff780015c088180000000000');
  const hashed = storedKey(0, 'Obj', 'k'.repeat(1900), 'f');
  const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex').slice(0, 16);
  t.is(hashed.key.length, 50);
  t.is(digest(hashed.key), '567cb2e1c1512a71');
  t.is(digest(hashed.original!), '195cda8e46969481');
  t.throws(() => tupleKey(Number.NaN), { instanceOf: RangeError });
});

test('removing hashed keys leaves no originals behind', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-embedded-'));
  const key = 'k'.repeat(4000);
  let store = await EmbeddedStore.open(dir);
  await store.commit({
    partition: 1,
    state: [
      {
        service: 'Obj',
        key,
        ops: [
          { op: 'set', key: 'a', value: Uint8Array.of(1) },
          { op: 'set', key: 'b', value: Uint8Array.of(2) },
        ],
      },
    ],
    records: [{ kind: 'object', key, value: 1 }],
  });
  await store.close();
  const count = () => {
    const root = open({ path: dir, maxDbs: 16 });
    const originals = root.openDB({ name: 'originals', encoding: 'binary', keyEncoding: 'binary' });
    const n = originals.getKeysCount();
    return root.close().then(() => n);
  };
  t.is(await count(), 3);
  store = await EmbeddedStore.open(dir);
  await store.commit({
    partition: 1,
    state: [{ service: 'Obj', key, ops: [{ op: 'clearAll' }] }],
    records: [{ kind: 'object', key, value: null }],
  });
  await store.close();
  t.is(await count(), 0);
  await rm(dir, { recursive: true, force: true });
});

/** Options that open table `name` only if it exists: else undefined (lmdb-js; its types omit both). */
const existing = (name: string) => ({ name, create: false });

test('a new store has only layout 2 tables', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-embedded-'));
  await (await EmbeddedStore.open(dir)).close();
  const root = open({ path: dir, maxDbs: 16 });
  t.is(root.openDB(existing('snapshots')) as unknown, undefined);
  t.is(
    root.openDB({ name: 'meta', encoding: 'binary', keyEncoding: 'binary' }).get(tupleKey('layout'))?.toString(),
    '2',
  );
  await root.close();
  await rm(dir, { recursive: true, force: true });
});

test('a store written in layout 1 is moved to layout 2 when it opens, and reads the same', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-embedded-'));
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  // Layout 1, as redstate wrote it before: a table per concern, timers indexed by key alone.
  const root = open({ path: dir, maxDbs: 16 });
  const table = (name: string) => root.openDB<Buffer, Buffer>({ name, encoding: 'binary', keyEncoding: 'binary' });
  const slot = tupleKey(3, 5000, 'expire|inv-1');
  await root.transaction(() => {
    table('snapshots').putSync(tupleKey(3, 'inv-1'), json({ v: 1, value: 'completed' }));
    table('snapshots').putSync(tupleKey(3, 'inv-2'), json({ v: 1, value: 'running' }));
    table('active').putSync(tupleKey(3, 'inv-2'), Buffer.alloc(0));
    table('journal').putSync(tupleKey(3, 'inv-1', 0), encodeEntry({ type: 0x400, payload: Uint8Array.of(1, 2) }));
    table('journal').putSync(tupleKey(3, 'inv-1', 1), encodeEntry({ type: 0x401, payload: Uint8Array.of(3) }));
    table('history').putSync(
      tupleKey(3, 'inv-1', 0),
      json({ from: null, event: 'xstate.init', to: 'running', at: 1, attempt: 0 }),
    );
    table('timers').putSync(slot, Buffer.alloc(0));
    table('timerIndex').putSync(tupleKey(3, 'expire|inv-1'), slot);
    table('timers').putSync(tupleKey(3, 6000, 'plain'), Buffer.alloc(0));
    table('timerIndex').putSync(tupleKey(3, 'plain'), tupleKey(3, 6000, 'plain'));
  });
  await root.close();

  let store = await EmbeddedStore.open(dir);
  const read = async () => ({
    ids: await store.listInvocations(3),
    active: await store.activeInvocations(3),
    snapshot: await store.loadInvocation(3, 'inv-1'),
    journal: (await store.readJournal(3, 'inv-1')).map(({ type, payload }) => ({ type, payload: [...payload] })),
    length: await store.journalLength(3, 'inv-1'),
    history: await store.readHistory(3, 'inv-1'),
    timers: await store.dueTimers(3, 10_000, 10),
  });
  const expected = {
    ids: ['inv-1', 'inv-2'],
    active: ['inv-2'],
    snapshot: { v: 1, value: 'completed' },
    journal: [
      { type: 0x400, payload: [1, 2] },
      { type: 0x401, payload: [3] },
    ],
    length: 2,
    history: [{ from: null, event: 'xstate.init', to: 'running', at: 1, attempt: 0 }],
    timers: [
      { key: 'expire|inv-1', dueAt: 5000 },
      { key: 'plain', dueAt: 6000 },
    ],
  };
  t.deepEqual(await read(), expected);
  await store.close();
  store = await EmbeddedStore.open(dir);
  t.deepEqual(await read(), expected, 'opened again: moved once, read the same');
  // The moved timer index still finds both timers' slots.
  await store.commit({
    partition: 3,
    timersRemove: [{ key: 'expire|inv-1', owner: 'inv-1' }, { key: 'plain' }],
    journal: [{ id: 'inv-1', at: 2, entries: [{ type: 0x402, payload: Uint8Array.of(4) }] }],
  });
  t.deepEqual(await store.dueTimers(3, 10_000, 10), []);
  t.is(await store.journalLength(3, 'inv-1'), 3);
  await store.close();

  const after = open({ path: dir, maxDbs: 16 });
  for (const name of ['snapshots', 'journal', 'history'])
    t.is(after.openDB(existing(name)) as unknown, undefined, `${name} is gone`);
  t.is(after.openDB({ name: 'timerIndex', encoding: 'binary', keyEncoding: 'binary' }).getKeysCount(), 0);
  after
    .openDB({ name: 'meta', encoding: 'binary', keyEncoding: 'binary' })
    .putSync(tupleKey('layout'), Buffer.from('3'));
  await after.close();
  await t.throwsAsync(EmbeddedStore.open(dir), { message: /has layout 3; this redstate reads layout 2/ });
  await rm(dir, { recursive: true, force: true });
});

test('commits answered just before the process is killed are read back from the commit log, and only once', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-embedded-'));
  const storeModule = new URL('../../src/store/embedded/embedded-store.js', import.meta.url).href;
  // A process that commits, hears every commit answered, and is killed before its checkpoint (50 ms).
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { EmbeddedStore } from ${JSON.stringify(storeModule)};
       const store = await EmbeddedStore.open(${JSON.stringify(dir)});
       await Promise.all(Array.from({ length: 200 }, (_, i) => store.commit({
         partition: i % 4,
         invocations: [{ id: 'inv-' + i, snapshot: { n: i }, active: i % 2 === 0 }],
         journal: [{ id: 'inv-' + i, at: 0, entries: [{ type: 0x400, payload: Uint8Array.of(i % 256) }] }],
         state: [{ service: 'Obj', key: 'k', ops: [{ op: 'set', key: 's' + i, value: Uint8Array.of(i % 256) }] }],
         history: [{ id: 'inv-' + i, entries: [{ from: null, event: 'e', to: 'running', at: i, attempt: 0 }] }],
       })));
       await store.commit({ partition: 0, deleteInvocations: ['inv-0'], state: [{ service: 'Obj', key: 'k', ops: [{ op: 'clear', key: 's0' }] }] });
       process.kill(process.pid, 'SIGKILL');`,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const signal = await new Promise((resolve) => child.once('exit', (_code, sig) => resolve(sig)));
  t.is(signal, 'SIGKILL');
  t.true(readCommitLog(join(dir, 'commit.log'), 1).length > 0, 'the commits were in the log, not yet checkpointed');

  let store = await EmbeddedStore.open(dir);
  const check = async () => {
    t.is(await store.loadInvocation(0, 'inv-0'), undefined);
    for (let i = 1; i < 200; i++) {
      t.deepEqual(await store.loadInvocation(i % 4, `inv-${i}`), { n: i });
      t.deepEqual(await store.readJournal(i % 4, `inv-${i}`), [{ type: 0x400, payload: Uint8Array.of(i % 256) }]);
      t.is((await store.readHistory(i % 4, `inv-${i}`)).length, 1);
    }
    t.is((await store.readState(0, 'Obj', 'k')).size, 49);
    t.is((await store.activeInvocations(2)).length, 50);
  };
  await check();
  // Replayed once: the next commits go on from there, and a second opening replays nothing again.
  await store.commit({
    partition: 1,
    journal: [{ id: 'inv-1', at: 1, entries: [{ type: 0x401, payload: Uint8Array.of(1) }] }],
  });
  await store.close();
  store = await EmbeddedStore.open(dir);
  t.is(await store.journalLength(1, 'inv-1'), 2);
  t.deepEqual(await store.loadInvocation(3, 'inv-199'), { n: 199 });
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

test('reads join what a checkpoint stored in LMDB with the groups logged after it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-embedded-'));
  let store = await EmbeddedStore.open(dir);
  const entry = (n: number) => ({ type: 0x400, payload: Uint8Array.of(n) });
  const steps = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => ({ from: 'a', event: `e${from + i}`, to: 'b', at: from + i, attempt: 0 }));
  const state = (ops: Array<{ op: 'set'; key: string; value: Uint8Array } | { op: 'clear'; key: string }>) => [
    { service: 'Obj', key: 'k', ops },
  ];
  await store.commit({
    partition: 2,
    invocations: [{ id: 'i', snapshot: { v: 1 }, active: true }],
    journal: [{ id: 'i', at: 0, entries: [0, 1, 2, 3, 4].map(entry) }],
    history: [{ id: 'i', entries: steps(0, 150) }],
    state: state(['s1', 's2', 's3'].map((key) => ({ op: 'set', key, value: Uint8Array.of(1) }))),
    timersAdd: [{ key: 't1', dueAt: 10 }],
  });
  await new Promise((resolve) => setTimeout(resolve, 150)); // past the checkpoint
  await store.commit({
    partition: 2,
    invocations: [{ id: 'i', snapshot: { v: 2 }, active: true }],
    journal: [{ id: 'i', at: 5, entries: [5, 6].map(entry) }],
    history: [{ id: 'i', entries: steps(150, 100) }],
    state: state([
      { op: 'clear', key: 's2' },
      { op: 'set', key: 's4', value: Uint8Array.of(4) },
    ]),
    timersRemove: [{ key: 't1' }],
    timersAdd: [{ key: 't2', dueAt: 5 }],
  });
  const read = async () => ({
    snapshot: await store.loadInvocation(2, 'i'),
    journal: (await store.readJournal(2, 'i', 3)).map((e) => e.payload[0]),
    length: await store.journalLength(2, 'i'),
    history: (await store.readHistory(2, 'i')).map((h) => h.at),
    state: [...(await store.readState(2, 'Obj', 'k')).keys()],
    timers: await store.dueTimers(2, 100, 10),
  });
  const expected = {
    snapshot: { v: 2 },
    journal: [3, 4, 5, 6],
    length: 7,
    history: Array.from({ length: 200 }, (_, i) => 50 + i),
    state: ['s1', 's3', 's4'],
    timers: [{ key: 't2', dueAt: 5 }],
  };
  t.deepEqual(await read(), expected, 'the second group still in the log');
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.deepEqual(await read(), expected, 'both checkpointed');
  await store.close();
  store = await EmbeddedStore.open(dir);
  t.deepEqual(await read(), expected, 'opened again');
  await store.close();
  await rm(dir, { recursive: true, force: true });
});
