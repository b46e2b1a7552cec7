/**
 * The admin API (port 9070): a Koa app whose routes only translate HTTP to registry, runtime
 * and query calls; its route table is `createAdminApp`. Middleware, outermost first:
 * compression, the error funnel, the `/vN` prefix, bearer authentication, koa-body (JSON bodies
 * read as text, with their size limit), the routes, then 404/405.
 */
import { gzipSync } from 'node:zlib';
import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import type { Config } from '../config.js';
import { CHALLENGE, requireBearer, TokenSet } from '../http/bearer-auth.js';
import { AdminEmptyError, AdminError, AdminTextError } from './errors.js';
import type { Registry } from '../registry/registry.js';
import { silentLogger, type Logger } from '../telemetry/log.js';
import { errorFunnel } from './funnel.js';
import { readBodies, sendJson } from './http-io.js';
import { adminOpenApi } from './openapi.js';
import { deploymentRoutes } from './routes/deployments.js';
import { limitRoutes, type FlowControl } from './routes/limits.js';
import { ADMIN_API_VERSIONS, metaRoutes, type ClusterView } from './routes/meta.js';
import { metricsRoutes } from './routes/metrics.js';
import { serviceRoutes } from './routes/services.js';
import { subscriptionRoutes } from './routes/subscriptions.js';
import { invocationRoutes } from './routes/invocations.js';
import { liveEventRoutes } from './routes/live-events.js';
import { queryRoutes, type QueryRouteDeps } from './routes/query.js';
import { serviceStateRoutes } from './routes/service-state.js';
import { scheduleRoutes } from './routes/schedules.js';
import { uiRoutes } from './ui.js';
import type { Runtime } from '../runtime/runtime.js';
import type { ObservedStore } from '../store/observed.js';

export interface AdminDeps {
  registry: Registry;
  config: Config;
  /** `/query` over a store. Absent: no `/query` (tests of the registry routes alone). */
  query?: QueryRouteDeps;
  /**
   * The runtime's operations: invocations, state, live events and the web UI. Absent: none of
   * them (in-process tests of the registry routes and `/query`).
   */
  live?: { runtime: Runtime; observed: ObservedStore; stopping: AbortSignal };
  /**
   * Routes of another layer served on the admin port, behind its prefixes, bearer token and
   * funnel: the MCP endpoint (src/mcp/, which calls what these routes call, so they cannot
   * import it; server.ts mounts it here), and a test's own.
   */
  extraRoutes?: (router: Router) => void;
  /** Registrations and 5xx answers; default: nothing logged (in-process tests). */
  log?: Logger;
  /** Readiness for `/health`: rejects with `StoreUnavailable` while the store is unreachable. Default: ready. */
  ready?: () => Promise<void>;
  /** Bearer tokens the API requires (src/bearer-auth.ts). Default: none, the API is open. */
  tokens?: TokenSet;
  /** Where limit rules and queue pauses take effect (the runtime). Default: they are only stored. */
  flow?: FlowControl;
  /** The nodes sharing the store and what each owns, for `/cluster-health`. Default: this node alone. */
  cluster?: ClusterView;
}

/** Where clients reach the ingress, for `/version` and the OpenAPI `servers`. */
export function advertisedIngressUrl(config: Config): string {
  const bound = config.ingressHost ?? config.host;
  const wildcard = bound === '0.0.0.0' || bound === '::' || bound === '';
  const host = wildcard ? 'localhost' : bound.includes(':') ? `[${bound}]` : bound;
  return `http://${host}:${config.ingressPort}/`;
}

/**
 * §3.1: `/v2/…`, `/v3/…`, `/v4/…` serve the same API; below V2 is a 400 text, above V4
 * falls through to the 404.
 */
async function versionPrefix(ctx: Context, next: Next): Promise<void> {
  const m = /^\/v(\d+)(\/.*)?$/.exec(ctx.path);
  if (m) {
    const version = Number(m[1]);
    if (version < ADMIN_API_VERSIONS.min) {
      throw new AdminTextError(
        400,
        `Unsupported Admin API version V${version}. This server supports versions between V${ADMIN_API_VERSIONS.min} and V${ADMIN_API_VERSIONS.max}.`,
      );
    }
    if (version <= ADMIN_API_VERSIONS.max) ctx.path = m[2] ?? '/';
  }
  await next();
}

/** §1.2: bodies of 32 bytes or more carry `vary: accept-encoding`, and are gzipped when asked. */
async function compression(ctx: Context, next: Next): Promise<void> {
  await next();
  const body: unknown = ctx.body;
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) return;
  if (Buffer.byteLength(body) < 32) return;
  ctx.vary('accept-encoding');
  if (/\bgzip\b/i.test(ctx.get('accept-encoding'))) {
    ctx.body = gzipSync(body);
    ctx.set('content-encoding', 'gzip');
  }
}

/** The methods of the routes matching a path, GET followed by HEAD, as axum lists them. */
function allowedMethods(router: Router, path: string): string[] {
  const out: string[] = [];
  for (const layer of router.match(path, 'GET').path) {
    for (const method of layer.methods) {
      if (method === 'HEAD') continue;
      if (!out.includes(method)) out.push(method);
      if (method === 'GET' && !out.includes('HEAD')) out.push('HEAD');
    }
  }
  return out;
}

export function createAdminApp(deps: AdminDeps): Koa {
  const log = deps.log ?? silentLogger;
  const ingressUrl = advertisedIngressUrl(deps.config);
  const router = new Router();
  metaRoutes(router, deps.config, ingressUrl, deps.ready ?? (async () => {}), deps.cluster);
  // §3.1: served, but not listed in the document itself.
  const openapi = adminOpenApi();
  router.get('/openapi', (ctx) => sendJson(ctx, 200, openapi));
  deploymentRoutes(router, deps.registry, log);
  serviceRoutes(router, deps.registry, ingressUrl);
  subscriptionRoutes(router, deps.registry);
  limitRoutes(router, deps.registry, deps.flow);
  metricsRoutes(router);
  if (deps.query) queryRoutes(deps.query)(router);
  if (deps.live) {
    invocationRoutes(deps.live.runtime)(router);
    serviceStateRoutes(deps.live.runtime, deps.registry)(router);
    scheduleRoutes(router, deps.live.runtime, deps.registry);
    // Live event streams never finish by themselves: they end when the server stops.
    liveEventRoutes(deps.live.observed, deps.live.stopping)(router);
    uiRoutes()(router);
  }
  deps.extraRoutes?.(router);

  const app = new Koa();
  app.use(compression);
  app.use(errorFunnel(log));
  app.use(versionPrefix);
  app.use(
    requireBearer(
      deps.tokens ?? new TokenSet([]),
      (path) => path === '/health',
      (message) => new AdminError(401, message, null, CHALLENGE),
    ),
  );
  app.use(readBodies);
  app.use(router.routes());
  // Reached only when no route took the request: §1.2, 404 or 405 with `allow`, empty bodies.
  app.use(async (ctx) => {
    const allowed = allowedMethods(router, ctx.path);
    if (allowed.length > 0) throw new AdminEmptyError(405, { allow: allowed.join(',') });
    throw new AdminEmptyError(404);
  });
  return app;
}
