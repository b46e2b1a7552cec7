import test from 'ava';
import { Overlay } from '../../src/store/embedded/overlay.js';
import { LayeredTables, type RangeQuery, type TableAccess } from '../../src/store/embedded/table-access.js';
import type { TableName } from '../../src/store/embedded/tables.js';

/** A table in memory standing for LMDB: a sorted map of one table, enough to check the merge against. */
function sortedTable(): TableAccess & { rows: Map<string, Buffer> } {
  const rows = new Map<string, Buffer>();
  const hex = (key: Buffer) => key.toString('hex');
  const sorted = (range: RangeQuery) => {
    const keys = [...rows.keys()]
      .map((k) => Buffer.from(k, 'hex'))
      .filter((k) => Buffer.compare(k, range.start) >= 0 && Buffer.compare(k, range.end) < 0)
      .sort(Buffer.compare);
    if (range.reverse) keys.reverse();
    return keys.slice(0, range.limit);
  };
  return {
    rows,
    get: (_table, key) => rows.get(hex(key)),
    put: (_table, key, value) => void rows.set(hex(key), value),
    remove: (_table, key) => rows.delete(hex(key)),
    keys: (_table, range) => sorted(range),
    entries: (_table, range) => sorted(range).map((key) => ({ key, value: rows.get(hex(key))! })),
  };
}

const T: TableName = 'invocations';

/** A deterministic stream of numbers, so that a failure can be run again. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

test('reads through the overlay and LMDB agree with one map of everything written, as groups are kept, dropped and checkpointed', (t) => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const next = random(seed);
    const lmdb = sortedTable();
    const overlay = new Overlay();
    const tables = new LayeredTables(overlay, lmdb);
    let model = new Map<string, Buffer>();
    let kept = new Map(model); // what the groups kept so far hold
    const key = () => Buffer.of(Math.floor(next() * 4), Math.floor(next() * 16));
    for (let step = 0; step < 3000; step++) {
      const roll = next();
      const k = key();
      if (roll < 0.45) {
        const value = Buffer.from(`v${step}`);
        tables.put(T, k, value);
        model.set(k.toString('hex'), value);
      } else if (roll < 0.7) {
        t.is(tables.remove(T, k), model.delete(k.toString('hex')), `seed ${seed} step ${step}: remove`);
      } else if (roll < 0.78) {
        tables.keepGroup(); // its record is in the log
        kept = new Map(model);
      } else if (roll < 0.82) {
        tables.dropGroup(); // its record failed
        model = new Map(kept);
      } else if (roll < 0.86) {
        tables.keepGroup();
        kept = new Map(model);
        for (const e of overlay.writes()) {
          // the checkpoint
          if (e.value) lmdb.put(T, e.key, e.value);
          else lmdb.remove(T, e.key);
        }
        overlay.clear();
      } else {
        const [a, b] = [key(), key()].sort(Buffer.compare);
        const range: RangeQuery = {
          start: a!,
          end: b!,
          reverse: next() < 0.5,
          limit: next() < 0.5 ? 1 + Math.floor(next() * 5) : undefined,
        };
        const expected = [...model.keys()]
          .map((k) => Buffer.from(k, 'hex'))
          .filter((k) => Buffer.compare(k, range.start) >= 0 && Buffer.compare(k, range.end) < 0)
          .sort(Buffer.compare);
        if (range.reverse) expected.reverse();
        const want = expected.slice(0, range.limit);
        t.deepEqual(
          tables.entries(T, range).map((e) => [e.key.toString('hex'), e.value.toString()]),
          want.map((k) => [k.toString('hex'), model.get(k.toString('hex'))!.toString()]),
          `seed ${seed} step ${step}: entries`,
        );
        t.deepEqual(tables.keys(T, range), want, `seed ${seed} step ${step}: keys`);
      }
      t.is(tables.get(T, k)?.toString(), model.get(k.toString('hex'))?.toString(), `seed ${seed} step ${step}: get`);
    }
  }
});

test('a group records its writes in order, duplicates included, for the log', (t) => {
  const tables = new LayeredTables(new Overlay(), sortedTable());
  tables.put(T, Buffer.of(2), Buffer.from('a'));
  tables.remove(T, Buffer.of(1));
  tables.put(T, Buffer.of(2), Buffer.from('b'));
  t.deepEqual(
    tables.groupWrites.map(({ key, value }) => [key[0], value?.toString() ?? null]),
    [
      [2, 'a'],
      [1, null],
      [2, 'b'],
    ],
  );
  tables.keepGroup();
  t.deepEqual(tables.groupWrites, []);
  t.is(tables.get(T, Buffer.of(2))?.toString(), 'b');
});

test('an overlay keeps its keys sorted and the last write of each', (t) => {
  const overlay = new Overlay();
  for (const n of [5, 1, 9, 3, 7, 1]) overlay.set(T, Buffer.of(n), Buffer.of(n * 10));
  t.deepEqual(overlay.set(T, Buffer.of(9), null), Buffer.of(90), 'set answers what it replaced');
  t.is(overlay.set(T, Buffer.of(11), null), undefined);
  overlay.unset(T, Buffer.of(11));
  t.is(overlay.size, 5);
  t.deepEqual(
    [...overlay.range(T, Buffer.of(2), Buffer.of(9))].map((e) => e.key[0]),
    [3, 5, 7],
  );
  t.deepEqual(
    [...overlay.range(T, Buffer.of(0), Buffer.of(10), true)].map((e) => [e.key[0], e.value?.[0] ?? null]),
    [
      [9, null],
      [7, 70],
      [5, 50],
      [3, 30],
      [1, 10],
    ],
  );
  t.is(overlay.get(T, Buffer.of(9)), null);
  t.is(overlay.get(T, Buffer.of(4)), undefined);
  t.is(overlay.get('state', Buffer.of(5)), undefined);
});
