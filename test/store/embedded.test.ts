import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EmbeddedStore } from '../../src/store/embedded/embedded-store.js';
import { open } from 'lmdb';
import { decodeTuple, hasHashedPart, MAX_KEY_BYTES, prefixRange, storedKey, tupleKey } from '../../src/store/embedded/tuple.js';
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
    [0, 'a'], [0, 'a', 'b'], [0, 'a\0'], [0, 'a\0b'], [0, 'a\u0001'], [0, 'ab'], [0, 'é'], [0, '😀'],
    [1, -1e300], [1, -1], [1, 0], [1, 0.5], [1, 2], [1, 1e13], [1, Infinity], [2, ''], [2, '', ''],
  ];
  const keys = tuples.map((parts) => tupleKey(...parts));
  const sorted = [...keys].sort(Buffer.compare);
  t.deepEqual(sorted.map((k) => decodeTuple(k)), tuples);
  t.is(new Set(keys.map((k) => k.toString('hex'))).size, keys.length);
  const long = 'x'.repeat(100);
  t.notDeepEqual(tupleKey(`${long}\0${long}`), tupleKey(long, long));
  const { start, end } = prefixRange(0, 'a');
  const inside = keys.filter((k) => Buffer.compare(k, start) >= 0 && Buffer.compare(k, end) < 0).map((k) => decodeTuple(k));
  t.deepEqual(inside, [[0, 'a'], [0, 'a', 'b']]);
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

test('removing hashed keys leaves no originals behind', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-embedded-'));
  const key = 'k'.repeat(4000);
  let store = await EmbeddedStore.open(dir);
  await store.commit({
    partition: 1,
    state: [{ service: 'Obj', key, ops: [{ op: 'set', key: 'a', value: Uint8Array.of(1) }, { op: 'set', key: 'b', value: Uint8Array.of(2) }] }],
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
  await store.commit({ partition: 1, state: [{ service: 'Obj', key, ops: [{ op: 'clearAll' }] }], records: [{ kind: 'object', key, value: null }] });
  await store.close();
  t.is(await count(), 0);
  await rm(dir, { recursive: true, force: true });
});
