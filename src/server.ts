/**
 * Builds the whole server from a config: telemetry → store → registry → runtime → supervisor →
 * the three HTTP listeners (ingress, admin, node). The order matters: nothing is served before
 * recovery has re-armed timers and restarted what was running.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { openStore } from './store/index.js';
import { Registry } from './registry/registry.js';
import { Runtime } from './runtime/runtime.js';
import { supervise } from './runtime/supervisor.js';
import { createIngressApp } from './ingress/app.js';
import { createAdminApp } from './admin/app.js';
import { invocationRoutes } from './admin/routes/invocations.js';
import { queryRoutes } from './admin/routes/query.js';
import { serviceStateRoutes } from './admin/routes/service-state.js';
import { recoverStateMutations } from './runtime/state-mutations.js';
import type { Logger } from './telemetry/log.js';
import { startProcessMetrics } from './telemetry/metrics.js';
import { createNodeEndpoint } from './telemetry/node-endpoint.js';
import { startTracing, stopTracing } from './telemetry/tracing.js';

export interface RunningServer {
  ingressPort: number;
  adminPort: number;
  nodePort: number;
  stop(): Promise<void>;
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export async function startServer(config: Config, log: Logger): Promise<RunningServer> {
  const startedAt = performance.now();
  if (config.tracingEndpoint) await startTracing(config.tracingEndpoint);
  startProcessMetrics();
  const store = await openStore({ dataDir: config.dataDir, log, ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}) });
  const storeFields = { store: store.info.backend, location: store.info.location };
  log.info(storeFields, `store: ${store.info.backend} at ${store.info.location}`);
  for (const w of store.info.warnings) log.warn(storeFields, w);
  const registry = await Registry.load(store);
  const runtime = new Runtime(store, registry, config, log);
  const recovered = await supervise(runtime);
  // Admin state mutations that were waiting for their key's lock (runtime/state-mutations.ts).
  await recoverStateMutations(runtime);
  // Attach commands still waiting for their target (runtime/attachments.ts).
  if (recovered.resumed > 0 || recovered.redelivered > 0) {
    log.info(recovered, `recovered ${recovered.resumed} invocations, ${recovered.redelivered} outbox messages`);
  }

  const ingress = http.createServer(createIngressApp({ runtime, registry, config }, log).callback());
  const adminRoutes = [invocationRoutes(runtime), serviceStateRoutes(runtime, registry), queryRoutes({ store, registry, config })];
  const admin = http.createServer(createAdminApp({ registry, config, log, extraRoutes: (router) => adminRoutes.forEach((add) => add(router)) }).callback());
  const node = createNodeEndpoint();
  // Calls block until their invocation completes: no server-side request timeout.
  ingress.requestTimeout = 0;
  ingress.keepAliveTimeout = 65_000;
  const ingressPort = await listen(ingress, config.ingressPort, config.host);
  const adminPort = await listen(admin, config.adminPort, config.host);
  const nodePort = await listen(node, config.nodePort, config.host);
  // The readiness line: test/support/server.ts and scripts find the ports in this text.
  log.info(
    { ports: { ingress: ingressPort, admin: adminPort, node: nodePort }, startup_ms: Math.round(performance.now() - startedAt) },
    `ingress on :${ingressPort}, admin on :${adminPort}, node on :${nodePort}`,
  );

  const servers = [ingress, admin, node];
  return {
    ingressPort,
    adminPort,
    nodePort,
    async stop() {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise((r) => server.close(r))));
      await runtime.stop();
      await store.close();
      await stopTracing();
    },
  };
}
