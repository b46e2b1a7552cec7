/**
 * `/deployments` routes (reference-behavior.md §3.3): HTTP in, registry call, view out.
 */
import type Router from '@koa/router';
import { MetaCode } from '../../errors.js';
import { AdminError } from '../errors.js';
import type { Registry, RegisterRequest } from '../../registry/registry.js';
import type { Deployment } from '../../registry/types.js';
import { LogField, type Logger } from '../../telemetry/log.js';
import { errorFields } from '../funnel.js';
import { readJsonBody, sendEmpty, sendJson } from '../http-io.js';
import { boolQuery, decodeRegister, decodeUpdateDeployment, deploymentParam } from '../requests.js';
import { deploymentDetailView, deploymentSummaryView, registerResponseView } from '../views.js';

export function deploymentRoutes(router: Router, registry: Registry, log: Logger): void {
  router.get('/deployments', (ctx) => {
    sendJson(ctx, 200, { deployments: registry.listDeployments().map(deploymentSummaryView) });
  });

  router.post('/deployments', async (ctx) => {
    const body = decodeRegister(readJsonBody(ctx));
    if (body.kind === 'lambda') {
      // The reference answers a Lambda it cannot reach with a discovery failure (§3.3).
      throw new AdminError(
        500,
        `[${MetaCode.discoveryFailed}] [${MetaCode.discoveryFailed}] error when calling '${body.arn}': Lambda deployments are not supported by this server`,
        MetaCode.discoveryFailed,
      );
    }
    const { kind: _kind, ...request } = body;
    const { created, deployment } = await registerLogged(registry, request, log);
    // The reference's location is relative, without a leading slash.
    sendJson(ctx, created ? 201 : 200, registerResponseView(deployment), { location: `deployments/${deployment.id}` });
  });

  router.get('/deployments/:deployment', (ctx) => {
    const id = deploymentParam(ctx.params['deployment'] ?? '');
    const deployment = registry.getDeployment(id);
    if (!deployment) throw new AdminError(404, `The requested deployment '${id}' does not exist`);
    sendJson(ctx, 200, deploymentDetailView(deployment));
  });

  router.delete('/deployments/:deployment', async (ctx) => {
    const id = deploymentParam(ctx.params['deployment'] ?? '');
    await registry.deleteDeployment(id, boolQuery(ctx.query, 'force'));
    sendEmpty(ctx, 202);
  });

  router.patch('/deployments/:deployment', async (ctx) => {
    const id = deploymentParam(ctx.params['deployment'] ?? '');
    const patch = decodeUpdateDeployment(readJsonBody(ctx));
    sendJson(ctx, 200, deploymentDetailView(await registry.updateDeployment(id, patch)));
  });
}

/**
 * Registers with one log line: info when stored (or found already registered), warn when
 * refused (discovery failed, incompatible revision…), with the address and the META code.
 */
export async function registerLogged(
  registry: Registry,
  request: RegisterRequest,
  log: Logger,
): Promise<{ created: boolean; deployment: Deployment }> {
  const fields = { [LogField.deploymentAddress]: request.uri, ...(request.dryRun ? { dry_run: true } : {}) };
  try {
    const result = await registry.register(request);
    const { deployment, created } = result;
    log.info(
      { ...fields, [LogField.deploymentId]: deployment.id, services: deployment.services.map((s) => s.name), created },
      created ? 'deployment registered' : 'deployment already registered',
    );
    return result;
  } catch (err) {
    log.warn({ ...fields, ...errorFields(err) }, 'deployment registration failed');
    throw err;
  }
}
