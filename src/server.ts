/**
 * Builds the whole server from a config: telemetry → store → registry → runtime → subscriptions →
 * the three HTTP listeners (ingress, admin, node). The order matters: nothing is served before
 * recovery has re-armed timers and restarted what was running.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadTokens } from './http/bearer-auth.js';
import type { Config } from './config.js';
import { createListener } from './http/listener.js';
import { discover } from './protocol/discovery.js';
import { RequestSigner } from './protocol/request-identity.js';
import { sessionOptions, Transport } from './protocol/transport.js';
import { openStore } from './store/index.js';
import { HeldWrites } from './store/held-writes.js';
import { ObservedStore } from './store/observed.js';
import { tlsOptions } from './store/redis/tls-files.js';
import { Registry } from './registry/registry.js';
import { Runtime } from './runtime/runtime.js';
import { SUBSCRIPTIONS_PARTITION } from './runtime/types.js';
import type { SubscriptionProgressRow } from './query/rows.js';
import { SubscriptionEngine } from './subscriptions/engine.js';
import { createIngressApp } from './ingress/app.js';
import { createAdminApp } from './admin/app.js';
import { LIVE_RECORD_KINDS } from './admin/routes/live-events.js';
import { mcpRoutes } from './mcp/endpoint.js';
import { QueryEngine } from './query/engine.js';
import { limitsFrom } from './query/limits.js';
import type { Logger } from './telemetry/log.js';
import { startProcessMetrics } from './telemetry/metrics.js';
import { createNodeEndpoint } from './telemetry/node-endpoint.js';
import { limitHeapGrowth } from './heap-growth.js';
import { startIdleRelease } from './idle-release.js';
import { startMappedPageCap } from './mapped-page-cap.js';
import { startTracing, stopTracing } from './telemetry/tracing.js';
import { claimDataDir } from './data-dir.js';
import { awaitWorkersGone, workerDir } from './workers.js';
import { ClusterNode } from './cluster/cluster-node.js';
import { rpcHandler } from './cluster/peers.js';
import { hostname } from 'node:os';
import type { Recovered } from './runtime/types.js';

export interface RunningServer {
  ingressPort: number;
  adminPort: number;
  nodePort: number;
  stop(): Promise<void>;
}

/** How long forwarded requests still waiting on this node may take once it has handed its partitions over. */
const NODE_PORT_GRACE_MS = 1000;

/** Stops listening, lets requests in flight finish for up to `graceMs`, then closes what is left. */
async function closeGracefully(servers: http.Server[], graceMs: number): Promise<void> {
  const closed = Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  for (const s of servers) s.closeIdleConnections();
  // Keep-alive connections that finish a request later are closed as they become idle.
  const idle = setInterval(() => servers.forEach((s) => s.closeIdleConnections()), 100);
  const grace = new Promise((r) => setTimeout(r, graceMs).unref());
  await Promise.race([closed, grace]);
  clearInterval(idle);
  for (const s of servers) s.closeAllConnections();
  await closed;
}

/**
 * In a worker (src/workers.ts) a listener is shared with the other workers through the primary,
 * unless `exclusive`: then it is this process's own (the node port).
 */
function listen(server: http.Server, port: number, host: string, exclusive = false): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, exclusive }, () => resolve((server.address() as AddressInfo).port));
  });
}

const redisTlsOf = (config: Config) =>
  config.redisUrl
    ? tlsOptions(config.redisUrl, {
        ca: config.redisTlsCaFile,
        cert: config.redisTlsCertFile,
        key: config.redisTlsKeyFile,
      })
    : undefined;

/**
 * The store the config names, reporting Redis outages in the log (store/redis/availability.ts);
 * `shared`: a worker's, whose embedded store's files the other workers write too.
 */
function openConfiguredStore(config: Config, log: Logger, shared: boolean) {
  const tls = redisTlsOf(config);
  return openStore({
    dataDir: config.dataDir,
    shared,
    ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
    redis: {
      ...(tls ? { tls } : {}),
      waitReplicas: config.redisWaitReplicas,
      onReplication: (message) => log.info({ store: 'redis' }, message),
      onAvailability: ({ available, message, outageMs }) => {
        const fields = { store: 'redis', ...(outageMs !== undefined ? { outage_ms: outageMs } : {}) };
        if (available) log.info(fields, message);
        else log.warn(fields, message);
      },
    },
  });
}

/** Where the other nodes reach this one: the configured address, else the bind address unless that is every interface. */
function nodeAddressOf(config: Config): string {
  if (config.nodeAddress) return config.nodeAddress;
  const host = config.host === '0.0.0.0' || config.host === '::' ? hostname() : config.host;
  return host.includes(':') ? `[${host}]` : host;
}

/** Takes this node's share of the partitions and recovers them; resolves with what recovery did. */
async function joinCluster(
  cluster: ClusterNode,
  runtime: Runtime,
  subscriptions: SubscriptionEngine,
  nodeUrl: string,
): Promise<Recovered> {
  const recovered: Recovered = { resumed: 0, redelivered: 0, mutations: 0, attaches: 0 };
  const host = {
    acquirePartition: async (p: number) => {
      const r = await runtime.acquirePartition(p);
      for (const k of Object.keys(recovered) as Array<keyof Recovered>) recovered[k] += r[k];
      if (p === SUBSCRIPTIONS_PARTITION) await subscriptions.setActive(true);
      return r;
    },
    // Handed over only once its consumers stopped: the next owner's start on the same consumer
    // reads what they left unacknowledged first.
    releasePartition: (p: number) => {
      runtime.releasePartition(p);
      return p === SUBSCRIPTIONS_PARTITION ? subscriptions.setActive(false) : undefined;
    },
    serve: runtime.serve.bind(runtime),
  };
  await cluster.start(host, nodeUrl);
  return recovered;
}

/** `worker`: this process's index among the workers (src/workers.ts), which log the readiness line for all. */
export async function startServer(config: Config, log: Logger, worker?: number): Promise<RunningServer> {
  const startedAt = performance.now();
  // One process per data dir: the embedded store's, or the node id of a Redis node; a worker's
  // is its own within the primary's.
  const dataDir = await claimDataDir(worker === undefined ? config.dataDir : workerDir(config, worker), config.nodeId);
  // Alone on the embedded store's files only once the workers of a primary killed before are gone.
  if (worker === undefined && !config.redisUrl) await awaitWorkersGone(config.dataDir);
  if (config.tracingEndpoint) await startTracing(config.tracingEndpoint);
  startProcessMetrics();
  const tokens = loadTokens(config);
  const signer = config.requestIdentityPrivateKeyPemFile
    ? RequestSigner.fromPemFile(config.requestIdentityPrivateKeyPemFile)
    : undefined;
  // Observed: the web UI's live updates hear of each commit once it is stored.
  const observed = new ObservedStore(await openConfiguredStore(config, log, worker !== undefined), {
    recordKinds: LIVE_RECORD_KINDS,
  });
  // Reads of a key's state settle the writes an attempt holds back for it a moment.
  const held = new HeldWrites();
  const store = held.reading(observed);
  limitHeapGrowth();
  const idleRelease = startIdleRelease({ mappedFiles: store.info.mappedFiles ?? [] });
  const mappedPageCap = startMappedPageCap(store.info.mappedFiles ?? []);
  const storeFields = { store: store.info.backend, location: store.info.location };
  log.info(storeFields, `store: ${store.info.backend} at ${store.info.location}`);
  for (const w of store.info.warnings) log.warn(storeFields, w);
  // Restate logs the key id too: it is what SDK endpoints are given as `identityKeys`.
  if (signer)
    log.info({ key_id: signer.keyId }, `request identity: requests to deployments are signed with ${signer.keyId}`);
  const registry = await Registry.load(store, {
    outageWaitMs: config.storeOutageWait,
    ...(signer ? { discover: (uri, opts) => discover(uri, { ...opts, signer }) } : {}),
  });
  // A store several nodes can share: this node holds leases on its share of the partitions,
  // the runtime works only on those and forwards the rest to their owners.
  const coordination = store.coordination;
  // Forwarded bodies, as ingress bodies, go up to the request size limit.
  const nodeSessions = sessionOptions({ maxMessageBytes: config.requestSizeLimit });
  const cluster = coordination
    ? new ClusterNode({
        coordination,
        partitions: config.partitions,
        nodeId: dataDir.nodeId,
        log,
        refresh: () => registry.refresh(),
        peerSessions: nodeSessions,
      })
    : undefined;
  // A deployment registered through this node is known to the others when its registration is answered.
  if (cluster) registry.announceChangesWith(() => cluster.announce('registry'));
  const runtime = new Runtime(
    store,
    registry,
    config,
    log,
    new Transport({ maxMessageBytes: config.requestSizeLimit }, signer),
    cluster,
    held,
  );
  // Bound before the partitions are taken: the other nodes forward to it as soon as this one owns any.
  const node = createNodeEndpoint(
    nodeSessions,
    rpcHandler(runtime, () => registry.refresh()),
  );
  const nodePort = await listen(node, config.nodePort, config.host, true);
  const tls = redisTlsOf(config);
  const subscriptions = new SubscriptionEngine({
    registry,
    runtime,
    log,
    maxInFlight: config.subscriptionMaxInFlight,
    ...(config.redisUrl ? { storeRedis: { url: config.redisUrl, ...(tls ? { options: { tls } } : {}) } } : {}),
    active: cluster === undefined,
  });
  runtime.reportSubscriptionProgress(() => subscriptions.progress());
  const recovered = cluster
    ? await joinCluster(cluster, runtime, subscriptions, `http://${nodeAddressOf(config)}:${nodePort}`)
    : await runtime.recover();
  if (recovered.resumed > 0 || recovered.redelivered > 0) {
    log.info(recovered, `recovered ${recovered.resumed} invocations, ${recovered.redelivered} outbox messages`);
  }
  // Subscriptions start consuming once recovery has restarted what their earlier messages created.
  subscriptions.start();

  const ready = () => store.ping();
  const ingress = createListener(
    createIngressApp({ runtime, registry, config, ready, tokens: tokens.ingress }, log).callback(),
  );
  // Live event streams never finish by themselves: they end when the server stops.
  const stopping = new AbortController();
  // One engine for `/query` and the MCP endpoint's SQL: the limits on queries at once hold for both.
  const queryEngine = new QueryEngine(limitsFrom(config));
  const querySources = {
    store,
    registry,
    config,
    subscriptions: () => runtime.subscriptionProgress() as Promise<SubscriptionProgressRow[]>,
    nodeId: dataDir.nodeId,
  };
  // Calls block until their invocation completes: no server-side request timeout.
  ingress.requestTimeout = 0;
  ingress.keepAliveTimeout = 65_000;
  const ingressPort = await listen(ingress, config.ingressPort, config.ingressHost ?? config.host);
  // Built once the ingress is bound: it advertises the ingress's port (`/version`, OpenAPI
  // servers), which the web UI's playground calls, also when the configured port was 0.
  const admin = createListener(
    createAdminApp({
      registry,
      config: { ...config, ingressPort },
      log,
      ready,
      tokens: tokens.admin,
      flow: runtime,
      ...(cluster ? { cluster: () => cluster.view() } : {}),
      query: { ...querySources, engine: queryEngine },
      live: { runtime, observed, stopping: stopping.signal },
      extraRoutes: mcpRoutes({
        runtime,
        registry,
        config: { ...config, ingressPort },
        ready,
        engine: queryEngine,
        sources: querySources,
        log,
      }),
    }).callback(),
  );
  const adminPort = await listen(admin, config.adminPort, config.adminHost ?? config.host);
  // Before the readiness line: whoever waits for that line finds this one already written.
  if (tokens.ingress.enabled || tokens.admin.enabled) {
    log.info(
      `bearer tokens required on: ${[tokens.ingress.enabled && 'ingress', tokens.admin.enabled && 'admin'].filter(Boolean).join(', ')}`,
    );
  }
  // The readiness line: test/support/server.ts and scripts find the ports in this text.
  log.info(
    {
      ports: { ingress: ingressPort, admin: adminPort, node: nodePort },
      startup_ms: Math.round(performance.now() - startedAt),
    },
    worker === undefined
      ? `ingress on :${ingressPort}, admin on :${adminPort}, node on :${nodePort}`
      : `worker ${worker} serving, its node port :${nodePort}`,
  );

  const servers = [ingress, admin];
  return {
    ingressPort,
    adminPort,
    nodePort,
    /**
     * Graceful: no new connections; requests in flight (calls waiting for their invocation)
     * may still be answered for `shutdownGrace` ms while the runtime keeps working; then the
     * remaining connections are closed, attempts are stopped (their invocations stay durable and
     * resume at the next start) and the store is closed once every commit it took is done.
     */
    async stop() {
      idleRelease.stop();
      mappedPageCap.stop();
      stopping.abort();
      await subscriptions.stop();
      await closeGracefully(servers, config.shutdownGrace);
      await runtime.stop();
      // Leases go after the last commit: the next owner starts from everything this one stored.
      await cluster?.stop();
      // The node port stays open until then: other nodes forward to the partitions this one
      // still owns. What they still wait for here they ask the next owner again (peers.ts).
      await closeGracefully([node], NODE_PORT_GRACE_MS);
      await store.close();
      dataDir.release();
      await stopTracing();
    },
  };
}
