/**
 * Builds the whole server from a config: store → registry → runtime → supervisor → the two
 * HTTP listeners. The order matters: nothing is served before recovery has re-armed timers
 * and restarted what was running.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { openStore } from './store/index.js';
import { ObservedStore } from './store/observed.js';
import { Registry } from './registry/registry.js';
import { Runtime } from './runtime/runtime.js';
import { supervise } from './runtime/supervisor.js';
import { createIngressApp } from './ingress/app.js';
import { createAdminApp } from './admin/app.js';
import { invocationRoutes } from './admin/routes/invocations.js';
import { queryRoutes } from './admin/routes/query.js';
import { serviceStateRoutes } from './admin/routes/service-state.js';
import { LIVE_RECORD_KINDS, liveEventRoutes } from './admin/routes/live-events.js';
import { uiRoutes } from './admin/ui.js';
import { recoverStateMutations } from './runtime/state-mutations.js';
import type { Logger } from './runtime/services.js';

export interface RunningServer {
  log: Logger;
  ingressPort: number;
  adminPort: number;
  stop(): Promise<void>;
}

const log: Logger = {
  info: (m) => process.stdout.write(`${new Date().toISOString()} INFO ${m}\n`),
  warn: (m) => process.stderr.write(`${new Date().toISOString()} WARN ${m}\n`),
  error: (m) => process.stderr.write(`${new Date().toISOString()} ERROR ${m}\n`),
};

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export async function startServer(config: Config): Promise<RunningServer> {
  // Observed: the web UI's live updates hear of each commit once it is stored.
  const store = new ObservedStore(await openStore({ dataDir: config.dataDir, ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}) }), {
    recordKinds: LIVE_RECORD_KINDS,
  });
  log.info(`store: ${store.info.backend} at ${store.info.location}`);
  for (const w of store.info.warnings) log.warn(w);
  const registry = await Registry.load(store);
  const runtime = new Runtime(store, registry, config, log);
  const recovered = await supervise(runtime);
  // Admin state mutations that were waiting for their key's lock (runtime/state-mutations.ts).
  await recoverStateMutations(runtime);
  // Attach commands still waiting for their target (runtime/attachments.ts).
  if (recovered.resumed > 0 || recovered.redelivered > 0) {
    log.info(`recovered ${recovered.resumed} invocations, ${recovered.redelivered} outbox messages`);
  }

  const ingress = http.createServer(createIngressApp({ runtime, registry, config }, log).callback());
  const adminRoutes = [
    invocationRoutes(runtime),
    serviceStateRoutes(runtime, registry),
    queryRoutes({ store, registry, config }),
    liveEventRoutes(store),
    uiRoutes(),
  ];
  // Calls block until their invocation completes: no server-side request timeout.
  ingress.requestTimeout = 0;
  ingress.keepAliveTimeout = 65_000;
  const ingressPort = await listen(ingress, config.ingressPort, config.host);
  // Built once the ingress is bound: it advertises the ingress's port (`/version`, OpenAPI
  // servers), which the web UI's playground calls, also when the configured port was 0.
  const adminConfig = { ...config, ingressPort };
  const admin = http.createServer(createAdminApp({ registry, config: adminConfig, extraRoutes: (router) => adminRoutes.forEach((add) => add(router)) }).callback());
  const adminPort = await listen(admin, config.adminPort, config.host);
  log.info(`ingress on :${ingressPort}, admin on :${adminPort}`);

  return {
    log,
    ingressPort,
    adminPort,
    async stop() {
      ingress.closeAllConnections();
      admin.closeAllConnections();
      await Promise.all([new Promise((r) => ingress.close(r)), new Promise((r) => admin.close(r))]);
      await runtime.stop();
      await store.close();
    },
  };
}
