/**
 * `call` and `send`: `/restate/call|send/{service}/[{key}/]{handler}` and the 1.6 legacy forms
 * `/{service}/[{key}/]{handler}[/send]` (reference-behavior.md §2.1–§2.3). GET works like POST.
 */
import type { Context } from 'koa';
import type Router from '@koa/router';
import { IngressError } from '../errors.js';
import { isWorkflowRun } from '../registry/types.js';
import type { Target } from '../../machines/invocation.js';
import { checkInput, inputHeaders, parseDelay, readBody, segmentsAfter } from './request.js';
import { writeCompletion } from './results.js';
import { rfc3339Nanos } from '../timestamps.js';
import { answerAttach } from './answers.js';
import type { IngressDeps } from './deps.js';
import { methodNotAllowed } from './errors.js';
import { requestTelemetry } from './telemetry.js';
import { ulid } from './ulid.js';
import { checkLimitKey, checkScope, rawLimitKey } from './flow-keys.js';

const BAD_PATH =
  'bad path, expected /restate/call/:service/:handler, /restate/send/:service/:handler, /restate/scope/:scope/call/:service/:handler, /restate/attach/:invocation_id, /restate/output/:invocation_id, or /restate/lookup';
const BAD_LEGACY_PATH = 'bad path, expected either /:service-name/:handler or /:object-name/:object-key/:handler';

function resolveTarget(deps: IngressDeps, segments: string[], badPath: string, scope: string | undefined) {
  if (segments.length < 2 || segments.length > 3) throw new IngressError(400, badPath);
  const service = segments[0]!;
  const meta = deps.registry.getService(service);
  if (!meta) throw new IngressError(404, `service '${service}' not found, make sure to register the service before calling it.`);
  const keyed = meta.ty !== 'Service';
  if (keyed !== (segments.length === 3)) throw new IngressError(400, badPath);
  const handlerName = segments[segments.length - 1]!;
  const resolved = deps.registry.resolveHandler(service, handlerName);
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
  if (deps.registry.getService(segments[0] ?? '')) telemetry?.service(segments[0]!, mode);
  if (ctx.method !== 'POST' && ctx.method !== 'GET') throw methodNotAllowed();
  const { target, resolved } = resolveTarget(deps, segments, badPath, scope);
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
  const { invocationId, executeAt, previous } = await deps.runtime.invoke({
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
  });
  telemetry?.invocation(invocationId);

  if (mode === 'send') {
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
  if (previous && isWorkflowRun(resolved)) {
    // reference-behavior.md §2.4: a second submission of a workflow id by call.
    throw new IngressError(409, 'the workflow method was already invoked', 'invocation', { invocationId });
  }
  if (previous) {
    // A repeated idempotent call gets the first invocation's answer, waiting for it if needed (§2.5).
    await answerAttach(ctx, deps, invocationId);
    return;
  }
  const done = await deps.runtime.attach(invocationId);
  if (!done) throw new IngressError(404, 'not found', 'invocation', { invocationId });
  writeCompletion(ctx, deps.registry, done);
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
