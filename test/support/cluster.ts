/**
 * Several redstate nodes sharing one store (issue 13), one redis-server or a Redis Cluster of
 * three masters: each node a real process with its own data dir (and so its own node id), one
 * SDK service registered once, through the first node.
 */
import got, { type Got } from 'got';
import path from 'node:path';
import { startRedstate, type RedstateProcess } from './server.js';
import { startService, type StartedService } from './sdk-service.js';
import { sqlRows, startStore, type StartedStore, type StoreKind } from './stack.js';
import { waitFor } from './wait.js';

export interface ClusterNodeHandle {
  server: RedstateProcess;
  ingress: Got;
  admin: Got;
}

export interface ClusterStack {
  store: StartedStore;
  service: StartedService;
  nodes: ClusterNodeHandle[];
  /** One of the nodes still running, at random. */
  any(live?: ClusterNodeHandle[]): ClusterNodeHandle;
  counts(): Promise<Record<string, number>>;
  /** `sys_partitions` as one node sees it. */
  partitions(via: ClusterNodeHandle): Promise<Array<{ partition_id: number; node_id: string | null; epoch: number }>>;
  stop(): Promise<void>;
}

const client = (prefixUrl: string) =>
  got.extend({ prefixUrl, throwHttpErrors: false, retry: { limit: 0 }, timeout: { request: 60_000 } });

export interface ClusterOptions {
  serviceFile?: string;
  env?: Record<string, string>;
  /** What the nodes share; default one redis-server. */
  store?: Exclude<StoreKind, 'embedded'>;
}

export async function startCluster(n: number, opts: ClusterOptions = {}): Promise<ClusterStack> {
  const store = await startStore(opts.store ?? 'redis');
  const service = await startService(path.resolve('test/support/services', opts.serviceFile ?? 'objects.mjs'));
  const servers: RedstateProcess[] = [];
  // One after the other: each later node takes its share from those already running.
  for (let i = 0; i < n; i++)
    servers.push(
      await startRedstate({ redisUrl: store.redisUrl!, env: { REDSTATE_NODE_ID: `node-${i}`, ...opts.env } }),
    );
  const nodes = servers.map((server) => ({ server, ingress: client(server.ingress), admin: client(server.admin) }));
  const registered = await nodes[0]!.admin.post('deployments', { json: { uri: service.url } });
  if (registered.statusCode !== 201)
    throw new Error(`registration failed: ${registered.statusCode} ${registered.body}`);
  const stack: ClusterStack = {
    store,
    service,
    nodes,
    any: (live = nodes) => live[Math.floor(Math.random() * live.length)]!,
    async counts() {
      const res = await fetch(`http://127.0.0.1:${service.countsPort}/counts`);
      return (await res.json()) as Record<string, number>;
    },
    async partitions(via) {
      return (await sqlRows(
        via.admin,
        'SELECT partition_id, node_id, epoch FROM sys_partitions ORDER BY partition_id',
      )) as Array<{ partition_id: number; node_id: string | null; epoch: number }>;
    },
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
      await service.stop();
      await store.stop();
    },
  };
  // Every node knows the deployment (they re-read the registry twice a second) and the
  // partitions are spread over all of them.
  await waitFor(async () => {
    const services = await Promise.all(nodes.map((node) => node.ingress.get('restate/health').then((r) => r.body)));
    if (services.some((s) => s !== services[0])) return false;
    const rows = await stack.partitions(nodes[0]!);
    const per = new Map<string, number>();
    for (const r of rows) if (r.node_id) per.set(r.node_id, (per.get(r.node_id) ?? 0) + 1);
    return per.size === n && [...per.values()].every((c) => c >= Math.floor(rows.length / n));
  }, 20_000);
  return stack;
}
