/**
 * The ingress (port 8080): Koa routes that translate HTTP into runtime commands and results
 * back into HTTP; no business logic. Bodies are read raw (any content type, byte-exact),
 * which is why koa-body is not used here.
 */
import Koa from 'koa';
import Router from '@koa/router';
import { CHALLENGE, requireBearer, TokenSet } from '../http/bearer-auth.js';
import { IngressError } from './errors.js';
import type { Logger } from '../telemetry/log.js';
import { cors, errorFunnel, methodNotAllowed, notFound } from './errors.js';
import type { IngressDeps } from './deps.js';
import { legacyInvoke, registerInvokeRoutes } from './invoke-routes.js';
import { registerResultRoutes } from './result-routes.js';
import { registerAwakeableRoutes } from './awakeable-routes.js';
import { ingressTelemetry } from './telemetry.js';

export function createIngressApp(deps: IngressDeps, log: Logger): Koa {
  const router = new Router();
  router.all('/restate/health', async (ctx) => {
    if (ctx.method !== 'GET') throw methodNotAllowed();
    await deps.ready();
    ctx.set('content-type', 'application/json');
    ctx.body = JSON.stringify({ services: deps.registry.listServices().map((s) => s.name) });
  });
  registerInvokeRoutes(router, deps);
  registerResultRoutes(router, deps);
  registerAwakeableRoutes(router, deps);
  router.all('/restate', () => {
    throw new IngressError(400, 'bad path: /restate');
  });
  router.all('/restate/*rest', () => {
    throw notFound();
  });

  const app = new Koa();
  app.use(errorFunnel(log));
  app.use(ingressTelemetry);
  app.use(cors);
  const refuse = (message: string) => new IngressError(401, message, 'ingress', { headers: CHALLENGE });
  app.use(requireBearer(deps.tokens ?? new TokenSet([]), (path) => path === '/restate/health', refuse));
  app.use(router.routes());
  // The router only falls through for paths it has no route for: the 1.6 legacy forms.
  app.use((ctx) => legacyInvoke(ctx, deps));
  return app;
}
