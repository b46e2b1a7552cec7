/** Fair shares and one round's plan (src/cluster/shares.ts). */
import test from 'ava';
import { fairShare, planRound } from '../../src/cluster/shares.js';

const holders = (spec: Record<string, number[]>, partitions = 24) => {
  const out: Array<string | undefined> = Array.from({ length: partitions }, () => undefined);
  for (const [node, ps] of Object.entries(spec)) for (const p of ps) out[p] = node;
  return out;
};
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

test('shares are even, the first nodes taking the remainder', (t) => {
  t.deepEqual(
    [0, 1, 2].map((i) => fairShare(24, 3, i)),
    [8, 8, 8],
  );
  t.deepEqual(
    [0, 1, 2, 3, 4].map((i) => fairShare(24, 5, i)),
    [5, 5, 5, 5, 4],
  );
  t.is(fairShare(24, 1, 0), 24);
});

test('a lone node takes every free partition', (t) => {
  const plan = planRound({ partitions: 24, self: 'a', nodes: ['a'], holders: holders({}), freeBefore: new Set() });
  t.deepEqual(
    plan.acquire.sort((x, y) => x - y),
    range(0, 24),
  );
  t.deepEqual(plan.release, []);
});

test('a node that joins takes nothing held; the holder hands its surplus over', (t) => {
  const view = {
    partitions: 24,
    nodes: ['a', 'b'],
    holders: holders({ a: range(0, 24) }),
    freeBefore: new Set<number>(),
  };
  t.deepEqual(planRound({ ...view, self: 'b' }), { acquire: [], release: [] });
  const a = planRound({ ...view, self: 'a' });
  t.is(a.release.length, 12);
  t.deepEqual(a.acquire, []);
  // Once released, b takes its share.
  const after = holders({ a: range(0, 12) });
  t.is(planRound({ ...view, self: 'b', holders: after }).acquire.length, 12);
});

test('partitions of a dead node: under-share nodes take them at once, anyone once they stayed free a round', (t) => {
  const dead = holders({ a: range(0, 8), b: range(8, 16) });
  // c is still announced: a and b are at their share, so they wait one round.
  const first = planRound({ partitions: 24, self: 'a', nodes: ['a', 'b', 'c'], holders: dead, freeBefore: new Set() });
  t.deepEqual(first.acquire, []);
  const second = planRound({
    partitions: 24,
    self: 'a',
    nodes: ['a', 'b', 'c'],
    holders: dead,
    freeBefore: new Set(range(16, 24)),
  });
  t.deepEqual(
    second.acquire.sort((x, y) => x - y),
    range(16, 24),
  );
  // c is gone from the registry: the shares are 12 each, taken at once.
  t.is(
    planRound({ partitions: 24, self: 'b', nodes: ['a', 'b'], holders: dead, freeBefore: new Set() }).acquire.length,
    4,
  );
  // Surplus is handed over only as far as free partitions do not cover the others' shares:
  // b needs 12, the 8 free ones cover 8.
  t.is(
    planRound({
      partitions: 24,
      self: 'a',
      nodes: ['a', 'b'],
      holders: holders({ a: range(0, 16) }),
      freeBefore: new Set(),
    }).release.length,
    4,
  );
  t.deepEqual(
    planRound({
      partitions: 24,
      self: 'a',
      nodes: ['a', 'b'],
      holders: holders({ a: range(0, 12), b: range(12, 16) }),
      freeBefore: new Set(),
    }).release,
    [],
  );
});
