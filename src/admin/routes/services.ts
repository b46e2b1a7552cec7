/**
 * `/services` routes (reference-behavior.md §3.4). The service state route belongs to the
 * runtime and is added by it.
 */
import type Router from '@koa/router';
import { AdminError } from '../errors.js';
import { serviceOpenApi } from '../../registry/openapi.js';
import type { Registry } from '../../registry/registry.js';
import type { ServiceMeta } from '../../registry/types.js';
import { readJsonBody, sendJson } from '../http-io.js';
import { decodeModifyService } from '../requests.js';
import { handlerView, serviceView } from '../views.js';

/** The service of that name, or the reference's 404. */
export function serviceNamed(registry: Registry, name: string): ServiceMeta {
  const service = registry.getService(name);
  if (!service) throw new AdminError(404, `The requested service '${name}' does not exist`);
  return service;
}

export function serviceRoutes(router: Router, registry: Registry, ingressUrl: string): void {
  const lookup = (name: string) => serviceNamed(registry, name);

  router.get('/services', (ctx) => {
    sendJson(ctx, 200, { services: registry.listServices().map(serviceView) });
  });

  router.get('/services/:service', (ctx) => {
    sendJson(ctx, 200, serviceView(lookup(ctx.params['service'] ?? '')));
  });

  router.patch('/services/:service', async (ctx) => {
    // The body is checked before the service is looked up, as the reference's extractors do.
    const patch = decodeModifyService(readJsonBody(ctx));
    sendJson(ctx, 200, serviceView(await registry.modifyService(ctx.params['service'] ?? '', patch)));
  });

  router.get('/services/:service/handlers', (ctx) => {
    const service = lookup(ctx.params['service'] ?? '');
    sendJson(ctx, 200, { handlers: service.handlers.map((h) => handlerView(service, h)) });
  });

  router.get('/services/:service/handlers/:handler', (ctx) => {
    const service = lookup(ctx.params['service'] ?? '');
    const name = ctx.params['handler'] ?? '';
    const handler = service.handlers.find((h) => h.name === name);
    if (!handler)
      throw new AdminError(404, `The requested handler '${name}' on service '${service.name}' does not exist`);
    sendJson(ctx, 200, handlerView(service, handler));
  });

  router.get('/services/:service/openapi', (ctx) => {
    sendJson(ctx, 200, serviceOpenApi(lookup(ctx.params['service'] ?? ''), ingressUrl));
  });
}
