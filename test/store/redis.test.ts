/**
 * The contract on Redis, plus what only Redis has: durability warnings, surviving a crash of
 * the server, failing fast while it is down. Every test gets its own redis-server, so tests
 * share no keys and run in parallel.
 */
import test from 'ava';
import { Redis } from 'ioredis';
import { openStore } from '../../src/store/index.js';
import { commitArgs } from '../../src/store/redis/commit-args.js';
import { durabilityWarnings } from '../../src/store/redis/durability.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import type { Store } from '../../src/store/types.js';
import { startRedis } from '../support/redis.js';
import { storeContract } from './contract.js';

storeContract('redis', async () => {
  const redis = await startRedis();
  let store: Store = await RedisStore.open(redis.url);
  return {
    store,
    // A crash, not a clean shutdown: what was acknowledged must come back from the AOF.
    async reopen() {
      await store.close();
      await redis.restart({ kill: true });
      store = await RedisStore.open(redis.url);
      return store;
    },
    async cleanup() {
      await store.close();
      await redis.stop();
    },
  };
});

test('a durable Redis gives no warnings; info strips the password', async (t) => {
  const redis = await startRedis({ password: 'secret' });
  const store = await openStore({ redisUrl: redis.url, dataDir: '/nonexistent' });
  try {
    t.is(store.info.backend, 'redis');
    t.deepEqual(store.info.warnings, []);
    t.is(store.info.location, `redis://127.0.0.1:${redis.port}`);
  } finally {
    await store.close();
    await redis.stop();
  }
});

test('appendonly no is reported as a risk', async (t) => {
  const redis = await startRedis({ appendonly: 'no', args: ['--maxmemory-policy', 'allkeys-lru'] });
  const store = await RedisStore.open(redis.url);
  try {
    t.is(store.info.warnings.length, 2);
    t.regex(store.info.warnings[0]!, /appendonly is "no".*lost when Redis restarts/);
    t.regex(store.info.warnings[1]!, /maxmemory-policy is "allkeys-lru".*evicted/);
  } finally {
    await store.close();
    await redis.stop();
  }
});

test('warnings name each appendfsync risk, and a forbidden CONFIG', async (t) => {
  t.deepEqual(durabilityWarnings({ appendonly: 'yes', appendfsync: 'always', 'maxmemory-policy': 'noeviction' }), []);
  t.regex(durabilityWarnings({ appendonly: 'yes', appendfsync: 'everysec' })[0]!, /~1 s of acknowledged work/);
  t.regex(durabilityWarnings({ appendonly: 'yes', appendfsync: 'no' })[0]!, /OS decides/);

  const redis = await startRedis({ args: ['--rename-command', 'CONFIG', ''] });
  const store = await RedisStore.open(redis.url);
  try {
    t.is(store.info.warnings.length, 1);
    t.regex(store.info.warnings[0]!, /could not be checked/);
  } finally {
    await store.close();
    await redis.stop();
  }
});

test('keys carry the partition hash tag and the layout documented in keys.ts', async (t) => {
  const redis = await startRedis();
  const store = await RedisStore.open(redis.url);
  const raw = new Redis(redis.url);
  try {
    await store.commit({
      partition: 7,
      invocations: [{ id: 'inv:1/x', snapshot: {}, active: true }],
      journal: [{ id: 'inv:1/x', at: 0, entries: [{ type: 0x0400, payload: Uint8Array.of(1, 2) }] }],
      state: [{ service: 'Obj', key: 'k:1', ops: [{ op: 'set', key: 'f', value: Uint8Array.of(3) }] }],
      timersAdd: [{ key: 't', dueAt: 1 }],
      outboxAdd: [{ id: 'o', body: 1 }],
      records: [{ kind: 'idem', key: 'r', value: 1 }],
      history: [{ id: 'inv:1/x', entries: [{ from: null, event: 'xstate.init', to: 'running', at: 1, attempt: 0 }] }],
    });
    await store.saveRegistry({});
    t.deepEqual((await raw.keys('*')).sort(), [
      'rs:{global}:registry',
      'rs:{p7}:active',
      'rs:{p7}:history:inv:1/x',
      'rs:{p7}:inv:inv:1/x',
      'rs:{p7}:invocations',
      'rs:{p7}:journal:inv:1/x',
      'rs:{p7}:outbox',
      'rs:{p7}:rec:idem',
      'rs:{p7}:state:["Obj","k:1"]',
      'rs:{p7}:timers',
    ]);
    // The entry mark 00 01, no appended time (8 zero bytes), the type 0x0400, the payload (store/codec.ts).
    t.deepEqual(
      await raw.lindexBuffer('rs:{p7}:journal:inv:1/x', 0),
      Buffer.of(0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x00, 1, 2),
    );
    // Redis Cluster hashes only the first {…} of a key: every key of a commit has {p7} first,
    // so the script stays in one slot whatever braces ids contain.
    const { keys } = commitArgs({
      partition: 7,
      deleteInvocations: ['{a}'],
      journal: [{ id: '}{', at: 0, entries: [] }],
      state: [{ service: '{s}', key: '{k}', ops: [{ op: 'clearAll' }] }],
      records: [{ kind: '{kind}', key: 'x', value: 1 }],
      history: [{ id: '{h}', entries: [] }],
    });
    t.is(keys.length, 5 + 3 + 1 + 1 + 1 + 1);
    for (const key of keys) t.is(/\{([^}]*)\}/.exec(key)?.[1], 'p7', key);
  } finally {
    raw.disconnect();
    await store.close();
    await redis.stop();
  }
});

test('commands fail fast while Redis is down, and work again once it is back', async (t) => {
  const redis = await startRedis();
  const store = await RedisStore.open(redis.url);
  try {
    await store.commit({ partition: 0, timersAdd: [{ key: 'before', dueAt: 1 }] });
    await redis.halt({ kill: true });
    const started = Date.now();
    await t.throwsAsync(store.commit({ partition: 0, timersAdd: [{ key: 'during', dueAt: 2 }] }));
    await t.throwsAsync(store.nextTimer(0));
    t.true(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    await redis.resume();
    let next;
    for (let i = 0; i < 100 && next === undefined; i++) {
      next = await store.nextTimer(0).catch(() => undefined);
      if (next === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    t.deepEqual(next, { key: 'before', dueAt: 1 });
  } finally {
    await store.close();
    await redis.stop();
  }
});
