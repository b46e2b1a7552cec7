/**
 * Leases and fencing against a real redis-server (lua/lease.lua, the epoch check of
 * lua/commit-transition.lua, lua/nodes.lua) and on the embedded store's shared files
 * (embedded/coordination.ts): two stores stand for two nodes sharing one Redis, or two workers
 * sharing one LMDB environment (here in one process; test/e2e/workers.test.ts runs them as
 * processes).
 */
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedStore } from '../../src/store/embedded/embedded-store.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { Fenced, type Coordination, type Store } from '../../src/store/types.js';
import { startRedis } from '../support/redis.js';

const FAR = () => performance.now() + 60_000;
const write = (partition: number, id: string) => ({ partition, outboxAdd: [{ id, body: { n: id } }] });

type Coordinated = Store & { coordination: Coordination };

const coordinated = (store: Store): Coordinated => {
  if (!store.coordination) throw new Error(`${store.info.backend}: no coordination`);
  return store as Coordinated;
};

const BACKENDS = {
  async redis() {
    const redis = await startRedis();
    const a = coordinated(await RedisStore.open(redis.url));
    const b = coordinated(await RedisStore.open(redis.url));
    return { a, b, stop: () => redis.stop() };
  },
  async embedded() {
    const dir = await mkdtemp(join(tmpdir(), 'redstate-leases-'));
    const a = coordinated(await EmbeddedStore.open(dir, { shared: true }));
    const b = coordinated(await EmbeddedStore.open(dir, { shared: true }));
    return { a, b, stop: () => rm(dir, { recursive: true, force: true }) };
  },
};

for (const [backend, open] of Object.entries(BACKENDS)) {
  const twoNodes = async () => {
    const { a, b, stop } = await open();
    return {
      a,
      b,
      async close() {
        await Promise.all([a.close(), b.close()]);
        await stop();
      },
    };
  };

  test(`${backend}: an acquisition raises the epoch; an old owner is refused whole by its commit`, async (t) => {
    const { a, b, close } = await twoNodes();
    try {
      const first = await a.coordination.acquire(3, 'node-a', 10_000);
      t.is(first, 1);
      t.is(await b.coordination.acquire(3, 'node-b', 10_000), undefined, 'held by a');
      a.coordination.tenure.hold(3, first!, FAR());
      await a.commit(write(3, 'm1'));

      // a's lease ends (released here to be quick: that raises the epoch to 2); b acquires, a
      // still believes it holds epoch 1.
      await a.coordination.release(3, 'node-a', first!);
      const second = await b.coordination.acquire(3, 'node-b', 10_000);
      t.is(second, 3);
      b.coordination.tenure.hold(3, second!, FAR());
      const refused = await t.throwsAsync(a.commit(write(3, 'm2')));
      t.true(refused instanceof Fenced, String(refused));
      t.regex(refused!.message, /epoch 3, this node holds 1/);
      await b.commit(write(3, 'm3'));
      t.deepEqual(
        (await b.outbox(3)).map((m) => m.id),
        ['m1', 'm3'],
        'the fenced commit wrote nothing',
      );

      // Renewals: only the holder at its epoch.
      t.false(await a.coordination.renew(3, 'node-a', 1, 10_000));
      t.true(await b.coordination.renew(3, 'node-b', 3, 10_000));
      const lease = (await a.coordination.leases(4))[3]!;
      t.is(lease.nodeId, 'node-b');
      t.is(lease.epoch, 3);
      t.true(lease.expiresAt! > Date.now() + 5_000);
      t.deepEqual((await a.coordination.leases(4))[0], {
        partition: 0,
        nodeId: undefined,
        epoch: 0,
        expiresAt: undefined,
      });
    } finally {
      await close();
    }
  });

  test(`${backend}: a lease expires by itself; its holder renews it while nobody took it; the same node id takes its own lease over at once`, async (t) => {
    const { a, b, close } = await twoNodes();
    try {
      t.is(await a.coordination.acquire(0, 'node-a', 200), 1);
      t.is(await b.coordination.acquire(0, 'node-b', 200), undefined);
      await new Promise((r) => setTimeout(r, 300));
      // A holder starved past its lease: nobody acquired meanwhile, so nobody can have committed.
      t.true(await a.coordination.renew(0, 'node-a', 1, 200), 'taken back at the same epoch');
      t.is(await b.coordination.acquire(0, 'node-b', 200), undefined, 'held by a again');
      await new Promise((r) => setTimeout(r, 300));
      t.is(await b.coordination.acquire(0, 'node-b', 10_000), 2, 'free once expired');
      t.false(await a.coordination.renew(0, 'node-a', 1, 200), 'not after another node acquired it');
      t.is(
        await b.coordination.acquire(0, 'node-b', 10_000),
        3,
        'a restarted process of node-b takes over, fencing the old one',
      );
    } finally {
      await close();
    }
  });

  test(`${backend}: once fencing is on, a partition not held is refused before the store, and one past its validity waits for its confirmation`, async (t) => {
    const { a, close } = await twoNodes();
    try {
      await a.commit(write(1, 'unfenced'));
      const epoch = (await a.coordination.acquire(1, 'node-a', 10_000))!;
      a.coordination.tenure.hold(1, epoch, performance.now() + 50);
      t.true(a.coordination.tenure.holds(1));
      t.false(a.coordination.tenure.holds(2));
      await a.commit(write(1, 'held'));
      await t.throwsAsync(a.commit(write(2, 'other')), { instanceOf: Fenced, message: /no lease held/ });
      await new Promise((r) => setTimeout(r, 80));
      t.false(a.coordination.tenure.holds(1), 'past its validity');
      // Past its validity a commit waits for the lease's confirmation: renewed, it goes on...
      const confirmed = a.commit(write(1, 'confirmed'));
      await new Promise((r) => setTimeout(r, 20));
      a.coordination.tenure.hold(1, epoch, FAR());
      await confirmed;
      // ...dropped, or not renewed in time, it is refused.
      a.coordination.tenure.hold(1, epoch, performance.now());
      const dropped = a.commit(write(1, 'lapsed'));
      await a.coordination.tenure.drop(1);
      await t.throwsAsync(dropped, { instanceOf: Fenced, message: /not renewed in time/ });
      a.coordination.tenure.hold(1, epoch, performance.now());
      await t.throwsAsync(a.commit(write(1, 'late')), { instanceOf: Fenced, message: /not renewed in time/ });
      a.coordination.tenure.hold(1, epoch, FAR());
      const inFlight = a.commit(write(1, 'in-flight'));
      await a.coordination.tenure.drop(1);
      await inFlight;
      await t.throwsAsync(a.commit(write(1, 'dropped')), { instanceOf: Fenced });
      t.deepEqual(
        (await a.outbox(1)).map((m) => m.id),
        ['confirmed', 'held', 'in-flight', 'unfenced'],
      );
    } finally {
      await close();
    }
  });

  test(`${backend}: the node registry: heartbeats with a lifetime, leave, the partition count fixed once`, async (t) => {
    const { a, b, close } = await twoNodes();
    try {
      const node = (id: string) => ({ nodeId: id, node: `http://${id}:5122` });
      await a.coordination.heartbeat(node('n1'), 150);
      const seen = await b.coordination.heartbeat(node('n2'), 10_000);
      t.deepEqual(
        seen.map((n) => n.nodeId),
        ['n1', 'n2'],
      );
      t.is(seen[0]!.node, 'http://n1:5122');
      await new Promise((r) => setTimeout(r, 200));
      t.deepEqual(
        (await b.coordination.heartbeat(node('n2'), 10_000)).map((n) => n.nodeId),
        ['n2'],
        'n1 expired',
      );
      await b.coordination.leave('n2');
      t.deepEqual(
        (await a.coordination.heartbeat(node('n1'), 10_000)).map((n) => n.nodeId),
        ['n1'],
      );

      t.is(await a.coordination.fixPartitionCount(24), 24);
      t.is(await b.coordination.fixPartitionCount(8), 24, 'the first count stays');
    } finally {
      await close();
    }
  });

  test(`${backend}: a partition written by another node meanwhile: appends continue where it left the journal`, async (t) => {
    const { a, b, close } = await twoNodes();
    const entry = (type: number) => ({ type, payload: new Uint8Array([type]) });
    const append = (at: number, ...types: number[]) => ({
      partition: 5,
      journal: [{ id: 'inv', at, entries: types.map(entry) }],
    });
    try {
      const first = (await a.coordination.acquire(5, 'node-a', 10_000))!;
      a.coordination.tenure.hold(5, first, FAR());
      await a.commit(append(0, 1, 2));
      await a.coordination.release(5, 'node-a', first);
      await a.coordination.tenure.drop(5);

      const second = (await b.coordination.acquire(5, 'node-b', 10_000))!;
      b.coordination.tenure.hold(5, second, FAR());
      await b.commit(append(2, 3));
      await b.coordination.release(5, 'node-b', second);

      // Back to a, whose own last append left the journal at 2 entries.
      const third = (await a.coordination.acquire(5, 'node-a', 10_000))!;
      a.coordination.tenure.hold(5, third, FAR());
      await t.throwsAsync(a.commit(append(2, 9)), { message: /journal/ });
      await a.commit(append(3, 4));
      t.deepEqual(
        (await a.readJournal(5, 'inv')).map((e) => e.type),
        [1, 2, 3, 4],
      );
    } finally {
      await close();
    }
  });
}
