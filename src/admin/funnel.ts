/**
 * The admin API's one error funnel: every error a route or extractor throws becomes the
 * reference's response here (reference-behavior.md §1.2), so no route builds an error body.
 */
import type { Context, Next } from 'koa';
import { AdminEmptyError, AdminError, AdminTextError, QueryError } from '../errors.js';
import { StoreUnavailable } from '../store/types.js';
import { sendEmpty, sendJson, sendText } from './http-io.js';

export type AdminLog = (message: string, err: unknown) => void;

interface KoaHttpError {
  status: number;
  expose: boolean;
  message: string;
}

function isExposedHttpError(err: unknown): err is KoaHttpError {
  const e = err as Partial<KoaHttpError> | null;
  return typeof e === 'object' && e !== null && typeof e.status === 'number' && e.expose === true && e.status < 500;
}

export function errorFunnel(log: AdminLog) {
  return async function funnel(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (err) {
      if (ctx.headerSent) {
        log(`admin: error after the response started (${ctx.method} ${ctx.path})`, err);
        return;
      }
      // Drop whatever the failing route had already set (e.g. `location`).
      for (const name of ctx.res.getHeaderNames()) ctx.res.removeHeader(name);
      render(ctx, err, log);
    }
  };
}

function render(ctx: Context, err: unknown, log: AdminLog): void {
  if (err instanceof AdminError) return sendJson(ctx, err.status, { message: err.message, restate_code: err.restateCode }, err.headers);
  if (err instanceof AdminTextError) return sendText(ctx, err.status, err.message);
  if (err instanceof AdminEmptyError) return sendEmpty(ctx, err.status, err.headers);
  // `/query` errors carry no `restate_code` (§1.2).
  if (err instanceof QueryError) return sendJson(ctx, err.status, { message: err.message });
  // The outage itself is logged once by the store, not once per request.
  if (err instanceof StoreUnavailable) return sendJson(ctx, 503, { message: err.message, restate_code: null });
  // Client errors raised by Koa itself (e.g. a malformed URI component).
  if (isExposedHttpError(err)) return sendText(ctx, err.status, err.message);
  log(`admin: unexpected error on ${ctx.method} ${ctx.path}`, err);
  sendJson(ctx, 500, { message: `internal server error: ${err instanceof Error ? err.message : String(err)}`, restate_code: null });
}
