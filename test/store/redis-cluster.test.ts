/**
 * The contract on a Redis Cluster of three masters, plus what only a cluster has: every
 * master's durability settings are checked, the registry lives under the global tag (a store
 * made before it is still read), and one master away makes its partitions unavailable, not the
 * store's data wrong.
 */
import test from 'ava';
import { Cluster, Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { StoreUnavailable, type Store } from '../../src/store/types.js';
import { startRedisCluster } from '../support/redis-cluster.js';
import { storeContract } from './contract.js';

storeContract('redis-cluster', async () => {
  const cluster = await startRedisCluster();
  // A store that fails to open must not leave three redis-servers keeping the test file alive.
  let store: Store = await RedisStore.open(cluster.url).catch(async (err: unknown) => {
    await cluster.stop();
    throw err;
  });
  return {
    store,
    // Every master crashes: what was acknowledged must come back from each one's AOF.
    async reopen() {
      await store.close();
      await Promise.all(cluster.masters.map((m) => m.restart({ kill: true })));
      await cluster.waitOk();
      store = await RedisStore.open(cluster.url);
      return store;
    },
    async cleanup() {
      await store.close();
      await cluster.stop();
    },
  };
});

test('several redis:// seeds with a password; each master is checked for durability; the registry has the global tag and the old key is still read', async (t) => {
  const cluster = await startRedisCluster({ password: 'clu5ter' });
  const everysec = new Redis(cluster.masters[2]!.url);
  await everysec.config('SET', 'appendfsync', 'everysec');
  everysec.disconnect();
  const raw = new Cluster([{ host: '127.0.0.1', port: cluster.masters[0]!.port }], {
    redisOptions: { password: 'clu5ter' },
  });
  try {
    await raw.set('rs:registry', JSON.stringify({ version: 1, from: 'before the global tag' }));
    const store = await RedisStore.open(
      cluster.masters
        .slice(0, 2)
        .map((m) => m.url)
        .join(','),
    );
    try {
      t.is(
        store.info.location,
        cluster.masters
          .slice(0, 2)
          .map((m) => `redis://127.0.0.1:${m.port}`)
          .join(','),
      );
      t.deepEqual(store.info.warnings.length, 1);
      t.regex(
        store.info.warnings[0]!,
        new RegExp(`^master 127\\.0\\.0\\.1:${cluster.masters[2]!.port}: Redis appendfsync is "everysec"`),
      );
      t.deepEqual(await store.loadRegistry(), { version: 1, from: 'before the global tag' });
      await store.saveRegistry({ version: 1, from: 'now' });
      t.deepEqual(await store.loadRegistry(), { version: 1, from: 'now' });
      t.is(await raw.get('rs:{global}:registry'), '{"version":1,"from":"now"}');
    } finally {
      await store.close();
    }
  } finally {
    raw.disconnect();
    await cluster.stop();
  }
});

test('a master away: its partitions and the ping answer StoreUnavailable, the others keep working, then all is back', async (t) => {
  // A long node timeout: the other masters keep serving their slots while one is away.
  const cluster = await startRedisCluster({ nodeTimeoutMs: 60_000 });
  const store = await RedisStore.open(cluster.url);
  const raw = new Cluster([{ host: '127.0.0.1', port: cluster.masters[0]!.port }]);
  try {
    const partitions = Array.from({ length: 24 }, (_, p) => p);
    await Promise.all(partitions.map((p) => store.commit({ partition: p, timersAdd: [{ key: `t${p}`, dueAt: p }] })));
    const owner = async (p: number) => Number(await raw.cluster('KEYSLOT', `{p${p}}`));
    const slotOwners = await raw.cluster('SLOTS');
    const away = cluster.masters[1]!;
    const onAway = async (p: number) => {
      const slot = await owner(p);
      return slotOwners.some(([from, to, master]) => slot >= from && slot <= to && master?.[1] === away.port);
    };
    const awayPartitions: number[] = [];
    for (const p of partitions) if (await onAway(p)) awayPartitions.push(p);
    t.true(
      awayPartitions.length > 0 && awayPartitions.length < 24,
      `partitions on the master: ${awayPartitions.join(',')}`,
    );

    await away.halt({ kill: true });
    await t.throwsAsync(store.ping(), { instanceOf: StoreUnavailable });
    for (const p of partitions) {
      if (awayPartitions.includes(p)) {
        await t.throwsAsync(store.nextTimer(p), { instanceOf: StoreUnavailable }, `partition ${p}`);
        const err = await t.throwsAsync(store.commit({ partition: p, timersAdd: [{ key: 'during', dueAt: 0 }] }), {
          instanceOf: StoreUnavailable,
        });
        t.truthy(err);
      } else {
        t.deepEqual(await store.nextTimer(p), { key: `t${p}`, dueAt: p }, `partition ${p}`);
      }
    }
    await away.resume();
    await cluster.waitOk();
    let pinged = false;
    for (let i = 0; i < 100 && !pinged; i++) {
      pinged = await store.ping().then(
        () => true,
        () => false,
      );
      if (!pinged) await new Promise((r) => setTimeout(r, 100));
    }
    t.true(pinged, 'ping answers again');
    for (const p of partitions) {
      const timers = await store.dueTimers(p, Number.MAX_SAFE_INTEGER, 10);
      // A commit that failed with an unknown outcome may have landed: the timer is there or not.
      t.deepEqual(
        timers.filter((x) => x.key !== 'during'),
        [{ key: `t${p}`, dueAt: p }],
        `partition ${p}`,
      );
    }
  } finally {
    raw.disconnect();
    await store.close();
    await cluster.stop();
  }
});
