/**
 * A whole end-to-end stack for one test file: an optional real Redis, the redstate server as a
 * child process, and an SDK service process registered as a deployment.
 */
import type { TestFn } from 'ava';
import got, { type Got } from 'got';
import path from 'node:path';
import { startRedis, type RunningRedis } from './redis.js';
import { startRedisCluster, type RunningRedisCluster } from './redis-cluster.js';
import { startSentinelSet, type RunningSentinelSet } from './redis-sentinel.js';
import { startRedstate, type RedstateProcess } from './server.js';
import { startService, type StartedService } from './sdk-service.js';
import { startNodes } from './nodes.js';

/**
 * `redis-cluster`: three masters (redis-cluster.ts); `redis-sentinel`: a primary, a replica,
 * three Sentinels (redis-sentinel.ts); `redis-2nodes` and `redis-cluster-2nodes`: two server
 * processes over one redis-server or a Redis Cluster, the test's requests to either in turn
 * (nodes.ts); `redis-workers` and `embedded-workers`: one server with two workers (`--workers 2`,
 * src/workers.ts) over one redis-server or the embedded store's files.
 */
export type StoreKind =
  | 'embedded'
  | 'redis'
  | 'redis-cluster'
  | 'redis-sentinel'
  | 'redis-2nodes'
  | 'redis-cluster-2nodes'
  | 'redis-workers'
  | 'embedded-workers';
const allKinds: StoreKind[] = [
  'embedded',
  'redis',
  'redis-cluster',
  'redis-sentinel',
  'redis-2nodes',
  'redis-cluster-2nodes',
  'redis-workers',
  'embedded-workers',
];

const chosenKinds = process.env['REDSTATE_TEST_STORES'];

/**
 * The stores the files that run on every store use: embedded and redis, or the list in
 * `REDSTATE_TEST_STORES` (e.g. `redis-cluster` to run them all on a Redis Cluster).
 */
export const storeKinds: StoreKind[] = storeKindsOf(chosenKinds, ['embedded', 'redis']);

/**
 * The stores of the files whose behaviour must be the same through any node of a cluster
 * (handlers, calls, signals, cancellation, admin operations on invocations): `storeKinds` and
 * two nodes over one Redis, or the list in `REDSTATE_TEST_STORES`.
 */
export const nodeKinds: StoreKind[] = storeKindsOf(chosenKinds, ['embedded', 'redis', 'redis-2nodes']);

/** Whether a stack of this kind runs several server processes (nodes.ts). */
export const isMultiNode = (kind: StoreKind): boolean => kind.endsWith('-2nodes');

/** The store's `backend` (metrics label, `StoreInfo.backend`): a Redis Cluster is the Redis backend. */
export const backendOf = (kind: StoreKind): 'embedded' | 'redis' =>
  kind.startsWith('embedded') ? 'embedded' : 'redis';

function storeKindsOf(list: string | undefined, otherwise: StoreKind[]): StoreKind[] {
  if (list === undefined || list.trim() === '') return otherwise;
  const kinds = list.split(',').map((k) => k.trim());
  const unknown = kinds.filter((k) => !(allKinds as string[]).includes(k));
  if (unknown.length > 0)
    throw new Error(`REDSTATE_TEST_STORES: unknown store ${unknown.join(', ')} (known: ${allKinds.join(', ')})`);
  return kinds as StoreKind[];
}

export interface Stack {
  server: RedstateProcess;
  /** Each node of a multi-node stack on its own (`server` is all of them at once). */
  nodes?: RedstateProcess[];
  /** The SDK service process, to kill and restart it. */
  service: StartedService;
  ingress: Got;
  admin: Got;
  serviceUrl: string;
  /** The Redis of a `redis` stack, to kill and restart it. */
  redis?: RunningRedis;
  /** The Redis Cluster of a `redis-cluster` stack, to kill and restart its masters. */
  redisCluster?: RunningRedisCluster;
  /** The primary, replica and Sentinels of a `redis-sentinel` stack. */
  redisSentinel?: RunningSentinelSet;
  /** Execution counters kept by the SDK service (durable.mjs). */
  counts(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

export type Rows = Array<Record<string, unknown>>;

/** `POST /query` answered in JSON; the rows of a query that must succeed. */
export async function sqlRows(admin: Got, sql: string): Promise<Rows> {
  const res = await admin.post('query', { json: { query: sql }, headers: { accept: 'application/json' } });
  if (res.statusCode !== 200) throw new Error(`query failed: ${res.statusCode} ${res.body}`);
  return (JSON.parse(res.body) as { rows: Rows }).rows;
}

const client = (prefixUrl: string) =>
  got.extend({ prefixUrl, throwHttpErrors: false, retry: { limit: 0 }, timeout: { request: 60_000 } });

export interface StackOptions {
  serviceFile?: string;
  /** Environment of the redstate process. */
  env?: Record<string, string>;
  /** Serve the SDK endpoint over HTTP/1.1 request/response and register it with `use_http_11`. */
  http1?: boolean;
  /** Environment of the SDK service process. */
  serviceEnv?: Record<string, string>;
}

/** The Redis a stack of `store` runs on (none for the embedded store), and its URL. */
export interface StartedStore {
  redisUrl?: string;
  redis?: RunningRedis;
  redisCluster?: RunningRedisCluster;
  redisSentinel?: RunningSentinelSet;
  stop(): Promise<void>;
}

export async function startStore(store: StoreKind): Promise<StartedStore> {
  const redis =
    store === 'redis' || store === 'redis-2nodes' || store === 'redis-workers' ? await startRedis() : undefined;
  const redisCluster =
    store === 'redis-cluster' || store === 'redis-cluster-2nodes' ? await startRedisCluster() : undefined;
  const redisSentinel = store === 'redis-sentinel' ? await startSentinelSet() : undefined;
  const redisUrl = redis?.url ?? redisCluster?.url ?? redisSentinel?.url;
  return {
    ...(redisUrl ? { redisUrl } : {}),
    ...(redis ? { redis } : {}),
    ...(redisCluster ? { redisCluster } : {}),
    ...(redisSentinel ? { redisSentinel } : {}),
    async stop() {
      await redis?.stop();
      await redisCluster?.stop();
      await redisSentinel?.stop();
    },
  };
}

export async function startStack(store: StoreKind, opts: StackOptions = {}): Promise<Stack> {
  const started = await startStore(store);
  const { redisUrl, redis, redisCluster, redisSentinel } = started;
  const service = await startService(path.resolve('test/support/services', opts.serviceFile ?? 'durable.mjs'), {
    env: { ...opts.serviceEnv, ...(opts.http1 ? { HTTP1: '1' } : {}) },
  });
  // Two nodes: registered through the first, then used through both in turn.
  const nodes = isMultiNode(store) ? await startNodes(redisUrl!, opts.env) : undefined;
  const env = store.endsWith('-workers') ? { REDSTATE_WORKERS: '2', ...opts.env } : opts.env;
  const server = nodes?.server ?? (await startRedstate({ ...(redisUrl ? { redisUrl } : {}), ...(env ? { env } : {}) }));
  const registered = await client(server.admin).post('deployments', {
    json: { uri: service.url, ...(opts.http1 ? { use_http_11: true } : {}) },
  });
  if (registered.statusCode !== 201)
    throw new Error(`registration failed: ${registered.statusCode} ${registered.body}`);
  return {
    server,
    service,
    ...(nodes ? { nodes: nodes.nodes } : {}),
    ingress: nodes?.ingress ?? client(server.ingress),
    admin: nodes?.admin ?? client(server.admin),
    serviceUrl: service.url,
    ...(redis ? { redis } : {}),
    ...(redisCluster ? { redisCluster } : {}),
    ...(redisSentinel ? { redisSentinel } : {}),
    async counts() {
      const res = await fetch(`http://127.0.0.1:${service.countsPort}/counts`);
      return (await res.json()) as Record<string, number>;
    },
    async stop() {
      await server.stop();
      await service.stop();
      await started.stop();
    },
  };
}

/** One stack per store kind (`kinds`) for a whole test file, started before its tests and stopped after. */
export function stacksPerStore(
  test: TestFn<Record<string, Stack>>,
  opts: StackOptions = {},
  kinds: StoreKind[] = storeKinds,
): void {
  test.before(async (t) => {
    const stacks = await Promise.all(kinds.map((k) => startStack(k, opts)));
    t.context = Object.fromEntries(kinds.map((k, i) => [k, stacks[i]!]));
  });
  test.after.always(async (t) => {
    await Promise.all(Object.values(t.context).map((s) => s.stop()));
  });
}
