/**
 * One ioredis client for what `REDSTATE_REDIS_URL` names (src/redis-url.ts): a `Redis` for one
 * server or for the primary Sentinel names, a `Cluster` for a Redis Cluster. All take the same
 * commands; what differs is what runs on every master (script loading, durability checks,
 * pings: `masters`).
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { parseRedisUrl, type RedisTarget } from '../../redis-url.js';

export type RedisClient = Redis | Cluster;

export const isCluster = (client: RedisClient): client is Cluster => client instanceof Cluster;

/**
 * `options` are per connection; for a cluster the ones that concern the whole client
 * (lazyConnect, auto-pipelining, reconnection) are lifted to the cluster.
 */
export function createRedisClient(url: string, options: RedisOptions): RedisClient {
  const target = parseRedisUrl(url);
  if (target.kind === 'single') return new Redis(url, options);
  if (target.kind === 'sentinel') return sentinelClient(target, options);
  const {
    lazyConnect,
    enableAutoPipelining,
    autoPipeliningIgnoredCommands,
    enableOfflineQueue,
    retryStrategy,
    tls,
    ...perNode
  } = options;
  return new Cluster(target.seeds, {
    redisOptions: {
      ...perNode,
      ...(target.username !== undefined ? { username: target.username } : {}),
      ...(target.password !== undefined ? { password: target.password } : {}),
      ...(target.tls || tls ? { tls: tls ?? {} } : {}),
    },
    ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    ...(enableAutoPipelining !== undefined ? { enableAutoPipelining } : {}),
    ...(autoPipeliningIgnoredCommands ? { autoPipeliningIgnoredCommands } : {}),
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
    ...(retryStrategy ? { clusterRetryStrategy: (attempt: number) => retryStrategy(attempt) ?? null } : {}),
    // A command whose connection closed may have run: ioredis would send it again after
    // this delay (availability.ts: never twice). MOVED, ASK, TRYAGAIN and CLUSTERDOWN are
    // refusals, so following or retrying them stays safe.
    retryDelayOnFailover: 0,
    // ioredis gives a node 1 s to answer CLUSTER SLOTS, then fails `connect` with "timeout": on a
    // loaded machine (a CI run of 2 cores with every test file busy) a healthy cluster took longer.
    // A node that is down refuses the connection at once, so the longer bound costs nothing there.
    slotsRefreshTimeout: 5000,
    // No periodic slot-map refresh (`slotsRefreshInterval`): a refresh in flight when the client
    // quits schedules the next one anyway, which keeps the process alive. The map is re-read on
    // MOVED, on CLUSTERDOWN and when `masters` misses a master.
  });
}

/**
 * The primary Sentinel names: on every (re)connection ioredis asks the sentinels where it is
 * and checks its role, so after a failover it follows the new primary by itself; the failover
 * detector (Sentinel's `+switch-master`) drops a connection to a demoted primary at once.
 */
function sentinelClient(target: Extract<RedisTarget, { kind: 'sentinel' }>, options: RedisOptions): Redis {
  const tls = target.tls || options.tls ? (options.tls ?? {}) : undefined;
  return new Redis({
    ...options,
    sentinels: target.sentinels,
    name: target.name,
    role: 'master',
    failoverDetector: true,
    ...(target.username !== undefined ? { username: target.username } : {}),
    ...(target.password !== undefined ? { password: target.password } : {}),
    ...(target.sentinelPassword !== undefined ? { sentinelPassword: target.sentinelPassword } : {}),
    ...(tls ? { tls, enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
    // While no sentinel answers, asked again as often as the primary would be (availability.ts).
    sentinelRetryStrategy: (attempt) => options.retryStrategy?.(attempt) ?? null,
  });
}

/**
 * The masters that own slots, one connection each. Throws when the slot map names a master
 * ioredis holds no connection to (it dropped it when the master went away): it is asked to
 * re-read the map, and the master is unreachable until then.
 */
export function masters(client: RedisClient): Redis[] {
  if (!isCluster(client)) return [client];
  const connected = new Map(client.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
  const owners = new Set(client.slots.map((keys) => keys[0]).filter((key): key is string => key !== undefined));
  const found: Redis[] = [];
  for (const key of owners) {
    const node = connected.get(key);
    if (!node) {
      client.refreshSlotsCache();
      throw new Error(`no connection to the Redis Cluster master ${key}`);
    }
    found.push(node);
  }
  if (found.length === 0) throw new Error('the Redis Cluster has no master with slots');
  return found;
}
