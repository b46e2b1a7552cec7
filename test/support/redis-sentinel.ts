/**
 * A Redis primary with one replica, watched by three Sentinels (`redis-server --sentinel`), all
 * the machine's redis-server on free loopback ports. The Sentinels notice a primary that stops
 * answering within a second and promote the replica. A killed primary is started again as its
 * replica (`rejoin`), as deployment scripts for Sentinel do (they ask the Sentinels whom to
 * follow): started as a primary, it would wait about 8 s before the Sentinels turn it into a
 * replica (Redis's sentinel.c waits 4 publish periods before it reconfigures an old primary), and
 * commits waiting for a replica (`WAIT`) would wait with it.
 */
import { Redis } from 'ioredis';
import { setTimeout as delay } from 'node:timers/promises';
import { startRedis, type RunningRedis } from './redis.js';

export const PRIMARY_NAME = 'mymaster';
/** How long a primary may not answer before the Sentinels call it down (Sentinel's default is 30 s). */
const DOWN_AFTER_MS = 1_000;

export interface RunningSentinelSet {
  /** `redis-sentinel://…/mymaster`, for REDSTATE_REDIS_URL. */
  url: string;
  /** The data nodes, in start order: the first started as primary. */
  nodes: RunningRedis[];
  sentinels: RunningRedis[];
  /** The node the Sentinels name as primary now. */
  primary(): Promise<RunningRedis>;
  /** Starts the halted `node` again, as a replica of the primary the Sentinels name once they have replaced it. */
  rejoin(node: RunningRedis, timeoutMs?: number): Promise<void>;
  /** Resolves once the Sentinels agree on a primary that has `replicas` replicas streaming from it. */
  healthy(timeoutMs?: number, replicas?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startSentinelSet(): Promise<RunningSentinelSet> {
  const primary = await startRedis();
  const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  const conf = [
    `sentinel monitor ${PRIMARY_NAME} 127.0.0.1 ${primary.port} 2`,
    `sentinel down-after-milliseconds ${PRIMARY_NAME} ${DOWN_AFTER_MS}`,
    `sentinel failover-timeout ${PRIMARY_NAME} 5000`,
    `sentinel parallel-syncs ${PRIMARY_NAME} 1`,
    '',
  ].join('\n');
  const sentinels = await Promise.all([1, 2, 3].map(() => startRedis({ sentinel: conf })));
  const nodes = [primary, replica];
  const ask = async <T>(f: (r: Redis) => Promise<T>): Promise<T> => {
    for (const s of sentinels) {
      try {
        return await once(s.port, f);
      } catch {
        // That sentinel is away: ask the next.
      }
    }
    throw new Error('no sentinel answers');
  };
  const primaryPort = async () =>
    Number(((await ask((r) => r.call('SENTINEL', 'get-master-addr-by-name', PRIMARY_NAME))) as [string, string])[1]);
  const set: RunningSentinelSet = {
    url: `redis-sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${PRIMARY_NAME}`,
    nodes,
    sentinels,
    async primary() {
      const port = await primaryPort();
      const node = nodes.find((n) => n.port === port);
      if (!node) throw new Error(`the sentinels name a primary on port ${port}, which is none of ours`);
      return node;
    },
    async rejoin(node, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const port = await primaryPort().catch(() => node.port);
        if (port !== node.port) return node.resume(['--replicaof', '127.0.0.1', String(port)]);
        if (Date.now() > deadline)
          throw new Error(`the sentinels did not replace the primary on ${node.port} within ${timeoutMs} ms`);
        await delay(100);
      }
    },
    async healthy(timeoutMs = 30_000, replicas = 1) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          const port = await primaryPort();
          const known = (await ask((r) => r.call('SENTINEL', 'sentinels', PRIMARY_NAME))) as unknown[];
          const info = await once(port, (r) => r.info('replication'));
          const online = info.split('\n').filter((l) => /^slave\d+:.*state=online/.test(l)).length;
          if (/role:master/.test(info) && online >= replicas && known.length >= 2) return;
        } catch {
          // Not yet.
        }
        if (Date.now() > deadline)
          throw new Error(
            `the sentinel set did not settle on a primary with ${replicas} replica(s) within ${timeoutMs} ms`,
          );
        await delay(100);
      }
    },
    async stop() {
      await Promise.all([...sentinels, ...nodes].map((n) => n.stop()));
    },
  };
  await set.healthy();
  return set;
}

/** One question to the server on `port`, on a connection of its own that is not tried again. */
async function once<T>(port: number, f: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return await f(r);
  } finally {
    r.disconnect();
  }
}
