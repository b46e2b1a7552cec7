/**
 * `call` and `send`: `/restate/call|send/{service}/[{key}/]{handler}` and the 1.6 legacy forms
 * `/{service}/[{key}/]{handler}[/send]` (reference-behavior.md §2.1–§2.3). GET works like POST.
 */
import type { Context } from 'koa';
import type Router from '@koa/router';
import { isWorkflowRun, type EffectiveHandler, type ServiceMeta } from '../registry/types.js';
import type { Target } from '../../machines/invocation.js';
import type { Header } from '../protocol/messages.js';
import type { InvokeRequest, InvokeResult } from '../runtime/types.js';
import { checkInput, inputHeaders, parseAt, parseDelay, readBody, segmentsAfter } from './request.js';
import { writeCompletion } from './results.js';
import { rfc3339Nanos } from '../timestamps.js';
import { attachOutcome, type Outcome } from './answers.js';
import type { IngressDeps } from './deps.js';
import { IngressError, methodNotAllowed } from './errors.js';
import { requestTelemetry, type RequestTelemetry } from './telemetry.js';
import { ulid } from './ulid.js';
import { checkLimitKey, checkPriority, checkScope, rawLimitKey } from './flow-keys.js';

const BAD_PATH =
  'bad path, expected /restate/call/:service/:handler, /restate/send/:service/:handler, /restate/scope/:scope/call/:service/:handler, /restate/attach/:invocation_id, /restate/output/:invocation_id, or /restate/lookup';
const BAD_LEGACY_PATH = 'bad path, expected either /:service-name/:handler or /:object-name/:object-key/:handler';

/** What a target names: its handler, and its service (asked for alone only when there is no such handler, to say which part is missing). */
interface Named {
  handler?: EffectiveHandler;
  service?: ServiceMeta;
}

/**
 * A call or a send as the ingress's rules see it, however it arrived: an HTTP request here, or
 * a tool of the admin's MCP endpoint (src/mcp/).
 */
export interface InvocationAsk {
  mode: 'call' | 'send';
  service: string;
  /** The object key or workflow id: given exactly when the service is keyed, else the answer is `badShape`. */
  key?: string;
  handler: string;
  scope?: string;
  /** As given (checked here); needs a scope. */
  limitKey?: string;
  /** `x-restate-priority` as given (checked here); needs a scope. */
  priority?: string;
  /** As given (ISO 8601 or the friendly form); sends only. */
  delay?: string;
  /** When to start, as given (RFC 3339); sends only, never beside `delay`. */
  at?: string;
  idempotencyKey?: string;
  /** Read only once the ask is known to be acceptable, so an unknown target is a 404 before a body is a 413. */
  body(): Promise<Buffer>;
  contentType?: string;
  /** Recorded in the Input entry. */
  headers: Header[];
  /** What the answer says when the key does not fit the service (the ingress names its paths). */
  badShape: string;
  telemetry?: RequestTelemetry;
  /** What the target names, when the caller looked it up already (the request's one look-up). */
  named?: Named;
}

export interface Started extends InvokeResult {
  handler: EffectiveHandler;
}

/** The registry's one look-up of a request. */
function lookUp(deps: IngressDeps, service: string, handler: string): Named {
  const resolved = deps.registry.resolveHandler(service, handler);
  if (resolved) return { handler: resolved, service: resolved.service };
  const meta = deps.registry.getService(service);
  return meta ? { service: meta } : {};
}

/** The target of an ask, checked against what it names, with the reference's errors in its order. */
function resolveTarget(deps: IngressDeps, ask: InvocationAsk) {
  const { service, handler: handlerName, scope } = ask;
  const { handler: resolved, service: meta } = ask.named ?? lookUp(deps, service, handlerName);
  if (!meta)
    throw new IngressError(404, `service '${service}' not found, make sure to register the service before calling it.`);
  const keyed = meta.ty !== 'Service';
  if (keyed !== (ask.key !== undefined)) throw new IngressError(400, ask.badShape);
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
  const target: Target = {
    service,
    handler: handlerName,
    serviceTy: meta.ty,
    ...(keyed ? { key: ask.key! } : {}),
    ...(scope !== undefined ? { scope } : {}),
  };
  return { target, resolved };
}

/** Checks an ask against the registry and the reference's rules, in the reference's order: the request it makes, with its handler. */
async function requestOf(
  deps: IngressDeps,
  ask: InvocationAsk,
): Promise<{ req: InvokeRequest; handler: EffectiveHandler }> {
  const { mode, telemetry } = ask;
  const { target, resolved } = resolveTarget(deps, ask);
  telemetry?.target(target);
  if (ask.limitKey !== undefined && ask.scope === undefined)
    throw new IngressError(400, 'limit-key requires a scope to be set');
  const limitKey = ask.limitKey !== undefined ? checkLimitKey(ask.limitKey) : undefined;
  if (ask.priority !== undefined && ask.scope === undefined)
    throw new IngressError(400, 'x-restate-priority requires a scope to be set');
  const priority = ask.priority !== undefined ? checkPriority(ask.priority) : undefined;
  if (ask.delay !== undefined && mode === 'call') {
    throw new IngressError(
      400,
      'cannot use the delay query parameter with calls. The delay is supported only with sends',
    );
  }
  if (ask.at !== undefined && mode === 'call') {
    throw new IngressError(400, 'cannot use the at query parameter with calls. The at is supported only with sends');
  }
  if (ask.at !== undefined && ask.delay !== undefined)
    throw new IngressError(400, 'cannot use both the delay and the at query parameters, use one of them');
  const delay = ask.delay !== undefined ? parseDelay(ask.delay) : undefined;
  const at = ask.at !== undefined ? parseAt(ask.at) : undefined;
  const { idempotencyKey } = ask;
  if (idempotencyKey !== undefined && isWorkflowRun(resolved)) {
    throw new IngressError(
      400,
      'cannot use the idempotency key with workflow handlers. The handler invocation will already be idempotent by the workflow key itself.',
    );
  }
  const body = await ask.body();
  checkInput(resolved.handler, ask.contentType, body);

  const now = Date.now();
  const traceparent = telemetry?.span?.traceparent();
  const req: InvokeRequest = {
    target,
    input: body,
    headers: ask.headers,
    retryPolicy: resolved.retryPolicy,
    invokedBy: 'ingress',
    ...(delay !== undefined ? { executeAt: now + delay } : {}),
    // A time already past starts now, as `?delay=0s` does.
    ...(at !== undefined ? { executeAt: Math.max(at, now) } : {}),
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    // §2.5: calls and sends to services and objects without a key still record one (workflows do not).
    ...(idempotencyKey === undefined && target.serviceTy !== 'Workflow' ? { autoIdempotencyKey: ulid(now) } : {}),
    ...(traceparent ? { traceparent } : {}),
    ...(limitKey !== undefined ? { limitKey } : {}),
    ...(priority !== undefined ? { priority } : {}),
  };
  return { req, handler: resolved };
}

/** Checks an ask and creates its invocation durably (a send; the MCP endpoint's call, which waits apart). */
export async function startInvocation(deps: IngressDeps, ask: InvocationAsk): Promise<Started> {
  const { req, handler } = await requestOf(deps, ask);
  const result = await deps.runtime.invoke(req, handler);
  ask.telemetry?.invocation(result.invocationId);
  return { ...result, handler };
}

/** A send's answer body (§2.3). */
export function sendAnswer({ invocationId, executeAt, previous }: InvokeResult) {
  return {
    invocationId,
    ...(executeAt !== undefined && !previous ? { executionTime: rfc3339Nanos(executeAt) } : {}),
    status: previous ? 'PreviouslyAccepted' : 'Accepted',
  };
}

/** A workflow id submitted again by call is a 409 (§2.4). */
function refuseWorkflowAgain(invocationId: string): never {
  throw new IngressError(409, 'the workflow method was already invoked', 'invocation', { invocationId });
}

/**
 * What a call answers once its invocation was started: its outcome once it completes. A
 * repeated idempotent call gets the first invocation's answer, waiting for it if needed (§2.5).
 */
export async function callOutcome(deps: IngressDeps, started: Started): Promise<Outcome> {
  const { invocationId } = started;
  if (started.previous && isWorkflowRun(started.handler)) refuseWorkflowAgain(invocationId);
  if (started.previous) return attachOutcome(deps, invocationId);
  const done = await deps.runtime.attach(invocationId);
  if (!done) throw new IngressError(404, 'not found', 'invocation', { invocationId });
  return { done };
}

/** A call through the ingress: checked, then one runtime operation that creates its invocation and waits for it. */
async function callOf(deps: IngressDeps, ask: InvocationAsk): Promise<Outcome & { handler: EffectiveHandler }> {
  const { req, handler } = await requestOf(deps, ask);
  const { invocationId, previous, done, stored } = await deps.runtime.call(req, handler);
  ask.telemetry?.invocation(invocationId);
  if (previous && isWorkflowRun(handler)) refuseWorkflowAgain(invocationId);
  if (!done) throw new IngressError(404, 'not found', 'invocation', { invocationId });
  // One stored before this call carries the end of its retention (§2.5, §2.6).
  return { done, ...(stored ? { expiresAt: done.expiresAt } : {}), handler };
}

async function invoke(
  ctx: Context,
  deps: IngressDeps,
  mode: 'call' | 'send',
  segments: string[],
  badPath: string,
  scope?: string,
): Promise<void> {
  const telemetry = requestTelemetry(ctx);
  const named = segments.length >= 2 ? lookUp(deps, segments[0]!, segments[segments.length - 1]!) : {};
  if (named.service) telemetry?.service(named.service.name, mode);
  if (ctx.method !== 'POST' && ctx.method !== 'GET') throw methodNotAllowed();
  if (segments.length < 2 || segments.length > 3) throw new IngressError(400, badPath);
  // The last value of a repeated parameter, as serde's query extractor takes it.
  const delay = lastOf(ctx.query['delay']);
  const at = lastOf(ctx.query['at']);
  const idempotencyKey =
    ctx.get('idempotency-key') !== '' || ctx.req.headers['idempotency-key'] !== undefined
      ? ctx.get('idempotency-key')
      : undefined;
  const limitKey = rawLimitKey(ctx);
  const priority = ctx.get('x-restate-priority') || undefined;
  const contentType = ctx.get('content-type') || undefined;
  const ask: InvocationAsk = {
    mode,
    service: segments[0]!,
    ...(segments.length === 3 ? { key: segments[1]! } : {}),
    handler: segments[segments.length - 1]!,
    ...(scope !== undefined ? { scope } : {}),
    ...(limitKey !== undefined ? { limitKey } : {}),
    ...(priority !== undefined ? { priority } : {}),
    ...(delay !== undefined ? { delay } : {}),
    ...(at !== undefined ? { at } : {}),
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    body: () => readBody(ctx, deps.config.requestSizeLimit),
    ...(contentType !== undefined ? { contentType } : {}),
    headers: inputHeaders(ctx),
    badShape: badPath,
    ...(telemetry ? { telemetry } : {}),
    named,
  };

  if (mode === 'send') {
    const started = await startInvocation(deps, ask);
    ctx.status = 202;
    ctx.set('content-type', 'application/json');
    ctx.set('x-restate-id', started.invocationId);
    ctx.body = JSON.stringify(sendAnswer(started));
    return;
  }
  const { done, expiresAt, handler } = await callOf(deps, ask);
  writeCompletion(ctx, handler.handler.output, done, expiresAt);
}

function lastOf(param: string | string[] | undefined): string | undefined {
  return typeof param === 'string' || param === undefined ? param : param[param.length - 1];
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
