/**
 * The ingress error funnel and the response headers every ingress answer carries
 * (reference-behavior.md §1.1), and the ingress's own error (`IngressError`). Routes throw
 * `IngressError`, the layers below domain errors; nothing else writes error bodies.
 */
import type { Context, Next } from 'koa';
import { DomainError, statusOf, TooManyRequests, Unavailable } from '../errors.js';
import { LogField, type Logger } from '../telemetry/log.js';

export type ErrorSource = 'ingress' | 'invocation';

/**
 * An ingress error: `{"code","message",["metadata"],["stacktrace"],"source"}` plus
 * `x-restate-error-source`, and `x-restate-id` when the error belongs to an invocation.
 */
export class IngressError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly source: ErrorSource = 'ingress',
    readonly details: {
      invocationId?: string;
      metadata?: Record<string, string>;
      stacktrace?: string;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = 'IngressError';
  }
}

/** Restate's ingress error body: keys in the order code, message, [metadata], [stacktrace], source. */
export function errorBody(e: IngressError): string {
  return JSON.stringify({
    code: e.status,
    message: e.message,
    ...(e.details.metadata && Object.keys(e.details.metadata).length > 0 ? { metadata: e.details.metadata } : {}),
    ...(e.details.stacktrace ? { stacktrace: e.details.stacktrace } : {}),
    source: e.source,
  });
}

export function errorFunnel(log: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (err) {
      const e = asIngressError(err);
      if (e.status >= 500 && !(err instanceof IngressError) && !(err instanceof Unavailable)) {
        log.error(
          { [LogField.httpMethod]: ctx.method, [LogField.urlPath]: ctx.path, [LogField.httpStatus]: e.status, err },
          'ingress request failed',
        );
      }
      if (e.details.invocationId) ctx.set('x-restate-id', e.details.invocationId);
      for (const [k, v] of Object.entries(e.details.headers ?? {})) ctx.set(k, v);
      ctx.set('x-restate-error-source', e.source);
      ctx.status = e.status;
      // Non-standard statuses (470) go out without a reason phrase, as Restate sends them.
      if (e.status === 470) ctx.message = '';
      ctx.set('content-type', 'application/json');
      ctx.body = errorBody(e);
    }
  };
}

function asIngressError(err: unknown): IngressError {
  if (err instanceof IngressError) return err;
  if (err instanceof TooManyRequests)
    return new IngressError(429, err.message, 'ingress', { headers: { 'retry-after': String(err.retryAfterSeconds) } });
  if (err instanceof DomainError) return new IngressError(statusOf(err), err.message);
  return new IngressError(500, err instanceof Error ? err.message : String(err), 'ingress');
}

/** CORS as the reference answers it: credentials allowed, origin echoed, preflight answered. */
export async function cors(ctx: Context, next: Next): Promise<void> {
  ctx.set('vary', 'origin, access-control-request-method, access-control-request-headers');
  ctx.set('access-control-allow-credentials', 'true');
  const origin = ctx.get('origin');
  if (origin) ctx.set('access-control-allow-origin', origin);
  if (ctx.method === 'OPTIONS') {
    const method = ctx.get('access-control-request-method');
    const headers = ctx.get('access-control-request-headers');
    if (method) ctx.set('access-control-allow-methods', method);
    if (headers) ctx.set('access-control-allow-headers', headers);
    ctx.status = 200;
    ctx.body = '';
    return;
  }
  await next();
}

export const notFound = () => new IngressError(404, 'not found');
export const methodNotAllowed = () => new IngressError(405, 'method not allowed');
