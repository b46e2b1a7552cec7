/**
 * `call` and `send`: `/restate/call|send/{service}/[{key}/]{handler}` and the 1.6 legacy forms
 * `/{service}/[{key}/]{handler}[/send]` (reference-behavior.md §2.1–§2.3). GET works like POST.
 */
import type { Context } from 'koa';
import type Router from '@koa/router';
import { IngressError } from './errors.js';
import { isWorkflowRun, type EffectiveHandler, type ServiceMeta } from '../registry/types.js';
import type { InvokeRequest } from '../runtime/types.js';
import type { Target } from '../../machines/invocation.js';
import { checkInput, inputHeaders, parseDelay, readBody, segmentsAfter } from './request.js';
import { writeCompletion } from './results.js';
import { rfc3339Nanos } from '../timestamps.js';
import type { IngressDeps } from './deps.js';
import { methodNotAllowed } from './errors.js';
import { requestTelemetry } from './telemetry.js';
import { ulid } from './ulid.js';
import { checkLimitKey, checkScope, rawLimitKey } from './flow-keys.js';

const BAD_PATH =
  'bad path, expected /restate/call/:service/:handler, /restate/send/:service/:handler, /restate/scope/:scope/call/:service/:handler, /restate/attach/:invocation_id, /restate/output/:invocation_id, or /restate/lookup';
const BAD_LEGACY_PATH = 'bad path, expected either /:service-name/:handler or /:object-name/:object-key/:handler';

/**
 * What the path names, in the registry's one look-up of the request: its handler, and its
 * service (asked for alone only when there is no such handler, to say which part is missing).
 */
function lookUp(deps: IngressDeps, segments: string[]): { handler?: EffectiveHandler; service?: ServiceMeta } {
  const handler = segments.length >= 2 ? deps.registry.resolveHandler(segments[0]!, segments[segments.length - 1]!) : undefined;
  if (handler) return { handler, service: handler.service };
  const service = segments[0] !== undefined ? deps.registry.getService(segments[0]) : undefined;
  return service ? { service } : {};
}

/** The target of the path, checked against what it names, with the reference's errors in its order. */
function resolveTarget(deps: IngressDeps, segments: string[], named: { handler?: EffectiveHandler; service?: ServiceMeta }, badPath: string, scope: string | undefined) {
  if (segments.length < 2 || segments.length > 3) throw new IngressError(400, badPath);
  const service = segments[0]!;
  const handlerName = segments[segments.length - 1]!;
  const { handler: resolved, service: meta } = named;
  if (!meta) throw new IngressError(404, `service '${service}' not found, make sure to register the service before calling it.`);
  const keyed = meta.ty !== 'Service';
  if (keyed !== (segments.length === 3)) throw new IngressError(400, badPath);
  if (!resolved) {
    throw new IngressError(
      404,
      `the service '${service}' exists, but the handler '${handlerName}' was not found, check that the handler exists in the latest registered service version.`,
    );
  }
  if (!resolved.public) throw new IngressError(400, 'the invoked service is not public');
  if (scope !== undefined && meta.ty === 'VirtualObject' && !deps.config.enableScopedVirtualObjects) {
    throw new IngressError(400, 'scope is not supported for Virtual Object targets');
  }
  const target: Target = { service, handler: handlerName, serviceTy: meta.ty, ...(keyed ? { key: segments[1]! } : {}), ...(scope !== undefined ? { scope } : {}) };
  return { target, resolved };
}

async function invoke(ctx: Context, deps: IngressDeps, mode: 'call' | 'send', segments: string[], badPath: string, scope?: string): Promise<void> {
  const telemetry = requestTelemetry(ctx);
  const named = lookUp(deps, segments);
  if (named.service) telemetry?.service(named.service.name, mode);
  if (ctx.method !== 'POST' && ctx.method !== 'GET') throw methodNotAllowed();
  const { target, resolved } = resolveTarget(deps, segments, named, badPath, scope);
  telemetry?.target(target);
  const rawKey = rawLimitKey(ctx);
  if (rawKey !== undefined && scope === undefined) throw new IngressError(400, 'limit-key requires a scope to be set');
  const limitKey = rawKey !== undefined ? checkLimitKey(rawKey) : undefined;
  const delayRaw = ctx.query['delay'];
  if (delayRaw !== undefined && mode === 'call') {
    throw new IngressError(400, 'cannot use the delay query parameter with calls. The delay is supported only with sends');
  }
  const delay = typeof delayRaw === 'string' ? parseDelay(delayRaw) : undefined;
  const idempotencyKey = ctx.get('idempotency-key') !== '' || ctx.req.headers['idempotency-key'] !== undefined ? ctx.get('idempotency-key') : undefined;
  if (idempotencyKey !== undefined && isWorkflowRun(resolved)) {
    throw new IngressError(
      400,
      'cannot use the idempotency key with workflow handlers. The handler invocation will already be idempotent by the workflow key itself.',
    );
  }
  const body = await readBody(ctx, deps.config.requestSizeLimit);
  checkInput(resolved.handler, ctx.get('content-type') || undefined, body);

  const now = Date.now();
  const traceparent = telemetry?.span?.traceparent();
  const req: InvokeRequest = {
    target,
    input: body,
    headers: inputHeaders(ctx),
    retryPolicy: resolved.retryPolicy,
    invokedBy: 'ingress',
    ...(delay !== undefined ? { executeAt: now + delay } : {}),
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    // §2.5: calls and sends to services and objects without a key still record one (workflows do not).
    ...(idempotencyKey === undefined && target.serviceTy !== 'Workflow' ? { autoIdempotencyKey: ulid(now) } : {}),
    ...(traceparent ? { traceparent } : {}),
    ...(limitKey !== undefined ? { limitKey } : {}),
  };
  if (mode === 'send') {
    const { invocationId, executeAt, previous } = await deps.runtime.invoke(req, resolved);
    telemetry?.invocation(invocationId);
    ctx.status = 202;
    ctx.set('content-type', 'application/json');
    ctx.set('x-restate-id', invocationId);
    ctx.body = JSON.stringify({
      invocationId,
      ...(executeAt !== undefined && !previous ? { executionTime: rfc3339Nanos(executeAt) } : {}),
      status: previous ? 'PreviouslyAccepted' : 'Accepted',
    });
    return;
  }
  const { invocationId, previous, done, stored } = await deps.runtime.call(req, resolved);
  telemetry?.invocation(invocationId);
  if (previous && isWorkflowRun(resolved)) {
    // reference-behavior.md §2.4: a second submission of a workflow id by call.
    throw new IngressError(409, 'the workflow method was already invoked', 'invocation', { invocationId });
  }
  if (!done) throw new IngressError(404, 'not found', 'invocation', { invocationId });
  // A repeated idempotent call gets the first invocation's answer; one stored before carries the end of its retention (§2.5, §2.6).
  writeCompletion(ctx, resolved.handler.output, done, stored ? done.expiresAt : undefined);
}

export function registerInvokeRoutes(router: Router, deps: IngressDeps): void {
  for (const mode of ['call', 'send'] as const) {
    const prefix = `/restate/${mode}`;
    router.all(prefix, () => {
      throw new IngressError(400, BAD_PATH);
    });
    router.all(`${prefix}/*rest`, (ctx) => invoke(ctx, deps, mode, segmentsAfter(ctx.path, prefix), BAD_PATH));
  }
  router.all('/restate/scope', scoped(deps));
  router.all('/restate/scope/*rest', scoped(deps));
}

/** `/restate/scope/{scope}/call|send/...`: checked for the feature before anything else (§2.9). */
function scoped(deps: IngressDeps) {
  return (ctx: Context) => {
    if (!deps.config.enableVqueues) throw new IngressError(400, 'scoped invocations require vqueues to be enabled');
    const [scope, mode, ...rest] = segmentsAfter(ctx.path, '/restate/scope');
    if (scope === undefined || (mode !== 'call' && mode !== 'send')) throw new IngressError(400, BAD_PATH);
    return invoke(ctx, deps, mode, rest, BAD_PATH, checkScope(scope));
  };
}

/**
 * The 1.6 paths: everything outside `/restate/`. Which segment is the handler depends on the
 * service's type, as in Restate: for a keyed service `/{object}/{key}/send` calls a handler
 * named `send` (@restatedev/xstate's documented path), `/{object}/{key}/{handler}/send` sends.
 */
export async function legacyInvoke(ctx: Context, deps: IngressDeps): Promise<void> {
  const segments = segmentsAfter(ctx.path, '');
  if (segments.length < 2) throw new IngressError(400, `bad path: ${ctx.path}`);
  const targetLength = deps.registry.getService(segments[0]!)?.ty === 'Service' ? 2 : 3;
  const send = segments.length === targetLength + 1 && segments[targetLength] === 'send';
  await invoke(ctx, deps, send ? 'send' : 'call', send ? segments.slice(0, -1) : segments, BAD_LEGACY_PATH);
}
