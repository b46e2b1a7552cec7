/**
 * The admin API's one error funnel: every error a route or extractor throws becomes the
 * reference's response here (reference-behavior.md §1.2), so no route builds an error body.
 * Every 5xx it answers is one error line in the log.
 */
import type { Context, Next } from 'koa';
import { DomainError, NotImplemented, statusOf, Unavailable } from '../errors.js';
import { AdminEmptyError, AdminError, AdminTextError } from './errors.js';
import { QueryError } from '../query/query-error.js';
import { LogField, type Logger } from '../telemetry/log.js';
import { sendEmpty, sendJson, sendText } from './http-io.js';

interface KoaHttpError {
  status: number;
  expose: boolean;
  message: string;
}

function isExposedHttpError(err: unknown): err is KoaHttpError {
  const e = err as Partial<KoaHttpError> | null;
  return typeof e === 'object' && e !== null && typeof e.status === 'number' && e.expose === true && e.status < 500;
}

export function errorFunnel(log: Logger) {
  return async function funnel(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (err) {
      if (ctx.headerSent) {
        log.error({ ...requestFields(ctx), err }, 'admin request failed after the response started');
        return;
      }
      // Drop whatever the failing route had already set (e.g. `location`).
      for (const name of ctx.res.getHeaderNames()) ctx.res.removeHeader(name);
      render(ctx, err);
      // An outage is logged once where it happens (the store), not once per request.
      if (ctx.status >= 500 && !(err instanceof Unavailable))
        log.error({ ...requestFields(ctx), ...errorFields(err) }, 'admin request failed');
    }
  };
}

/**
 * An admin or domain error is an answer the code meant to give: its message and META code say it all.
 * Anything else is a bug, logged with its stack.
 */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof AdminError)
    return { [LogField.errorCode]: err.restateCode ?? undefined, [LogField.errorMessage]: err.message };
  if (err instanceof DomainError)
    return { [LogField.errorCode]: err.code ?? undefined, [LogField.errorMessage]: err.message };
  return { err };
}

/** The request as the log line names it; the path without its query, as the client sent it. */
function requestFields(ctx: Context): Record<string, string | number> {
  return {
    [LogField.httpMethod]: ctx.method,
    [LogField.urlPath]: ctx.originalUrl.split('?')[0]!,
    [LogField.httpStatus]: ctx.status,
  };
}

function render(ctx: Context, err: unknown): void {
  if (err instanceof AdminError)
    return sendJson(ctx, err.status, { message: err.message, restate_code: err.restateCode }, err.headers);
  if (err instanceof AdminTextError) return sendText(ctx, err.status, err.message);
  if (err instanceof AdminEmptyError) return sendEmpty(ctx, err.status, err.headers);
  // The reference answers what it does not implement with an empty 501.
  if (err instanceof NotImplemented) return sendEmpty(ctx, 501);
  if (err instanceof DomainError) return sendJson(ctx, statusOf(err), { message: err.message, restate_code: err.code });
  // `/query` errors carry no `restate_code` (§1.2).
  if (err instanceof QueryError) return sendJson(ctx, err.status, { message: err.message });
  // Client errors raised by Koa itself (e.g. a malformed URI component).
  if (isExposedHttpError(err)) return sendText(ctx, err.status, err.message);
  sendJson(ctx, 500, {
    message: `internal server error: ${err instanceof Error ? err.message : String(err)}`,
    restate_code: null,
  });
}
