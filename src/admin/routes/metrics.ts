/**
 * `GET /metrics` on the admin port: the Prometheus exposition of src/telemetry/metrics.ts, the
 * same as on the node port. (Restate answers 404 here; see docs/architecture.md, "Departures".)
 */
import type Router from '@koa/router';
import { metricsText } from '../../telemetry/metrics.js';

export function metricsRoutes(router: Router): void {
  router.get('/metrics', async (ctx) => {
    const { contentType, body } = await metricsText();
    ctx.status = 200;
    ctx.set('content-type', contentType);
    ctx.body = body;
  });
}
