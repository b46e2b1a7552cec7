/**
 * Builds the whole server from a config: store → registry → runtime → supervisor → the two
 * HTTP listeners. The order matters: nothing is served before recovery has re-armed timers
 * and restarted what was running.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadTokens } from './bearer-auth.js';
import type { Config } from './config.js';
import { createListener } from './http-listener.js';
import { discover } from './protocol/discovery.js';
import { RequestSigner } from './protocol/request-identity.js';
import { Transport } from './protocol/transport.js';
import { openStore } from './store/index.js';
import { tlsOptions } from './store/redis/tls-files.js';
import { Registry } from './registry/registry.js';
import { Runtime } from './runtime/runtime.js';
import { supervise } from './runtime/supervisor.js';
import { createIngressApp } from './ingress/app.js';
import { createAdminApp } from './admin/app.js';
import { invocationRoutes } from './admin/routes/invocations.js';
import { queryRoutes } from './admin/routes/query.js';
import { serviceStateRoutes } from './admin/routes/service-state.js';
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

/** The store the config names, reporting Redis outages in the log (store/redis/availability.ts). */
function openConfiguredStore(config: Config) {
  const tls = config.redisUrl
    ? tlsOptions(config.redisUrl, { ca: config.redisTlsCaFile, cert: config.redisTlsCertFile, key: config.redisTlsKeyFile })
    : undefined;
  return openStore({
    dataDir: config.dataDir,
    ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
    redis: { ...(tls ? { tls } : {}), onAvailability: (available, message) => (available ? log.info(message) : log.warn(message)) },
  });
}

export async function startServer(config: Config): Promise<RunningServer> {
  const tokens = loadTokens(config);
  const signer = config.requestIdentityPrivateKeyPemFile ? RequestSigner.fromPemFile(config.requestIdentityPrivateKeyPemFile) : undefined;
  const store = await openConfiguredStore(config);
  log.info(`store: ${store.info.backend} at ${store.info.location}`);
  for (const w of store.info.warnings) log.warn(w);
  // Restate logs the key id too: it is what SDK endpoints are given as `identityKeys`.
  if (signer) log.info(`request identity: requests to deployments are signed with ${signer.keyId}`);
  const registry = await Registry.load(store, signer ? { discover: (uri, opts) => discover(uri, { ...opts, signer }) } : {});
  const runtime = new Runtime(store, registry, config, log, new Transport(signer));
  const recovered = await supervise(runtime);
  // Admin state mutations that were waiting for their key's lock (runtime/state-mutations.ts).
  await recoverStateMutations(runtime);
  // Attach commands still waiting for their target (runtime/attachments.ts).
  if (recovered.resumed > 0 || recovered.redelivered > 0) {
    log.info(`recovered ${recovered.resumed} invocations, ${recovered.redelivered} outbox messages`);
  }

  const ready = () => store.ping();
  const ingress = createListener(createIngressApp({ runtime, registry, config, ready, tokens: tokens.ingress }, log).callback());
  const adminRoutes = [invocationRoutes(runtime), serviceStateRoutes(runtime, registry), queryRoutes({ store, registry, config })];
  const admin = createListener(
    createAdminApp({ registry, config, ready, tokens: tokens.admin, extraRoutes: (router) => adminRoutes.forEach((add) => add(router)) }).callback(),
  );
  // Calls block until their invocation completes: no server-side request timeout.
  ingress.requestTimeout = 0;
  ingress.keepAliveTimeout = 65_000;
  const ingressPort = await listen(ingress, config.ingressPort, config.ingressHost ?? config.host);
  const adminPort = await listen(admin, config.adminPort, config.adminHost ?? config.host);
  log.info(`ingress on :${ingressPort}, admin on :${adminPort}`);
  if (tokens.ingress.enabled || tokens.admin.enabled) {
    log.info(`bearer tokens required on: ${[tokens.ingress.enabled && 'ingress', tokens.admin.enabled && 'admin'].filter(Boolean).join(', ')}`);
  }

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
