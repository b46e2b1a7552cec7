/**
 * Writing an invocation's outcome as an HTTP response (reference-behavior.md §2.2, §2.6, §2.11):
 * the output bytes with the handler's output content type, or the failure as
 * `{code, message, [metadata], [stacktrace], source: "invocation"}` with its code as status.
 */
import type { Context } from 'koa';
import { IngressError } from './errors.js';
import type { Registry } from '../registry/registry.js';
import type { HandlerMeta } from '../registry/types.js';
import type { Target } from '../../machines/invocation.js';
import type { CompletedInvocation } from '../model/persisted.js';
import { rfc3339Offset } from '../timestamps.js';

function httpStatus(code: number): number {
  return Number.isInteger(code) && code >= 400 && code <= 599 ? code : 500;
}

/** The output a target's handler declares, from the registry (undefined: no such handler now). */
export function declaredOutput(registry: Registry, target: Target): HandlerMeta['output'] | undefined {
  return registry.getService(target.service)?.handlers.find((h) => h.name === target.handler)?.output;
}

/** `output`: what the invocation's handler declares (the caller resolved it, `declaredOutput`). */
export function writeCompletion(
  ctx: Context,
  output: HandlerMeta['output'] | undefined,
  done: CompletedInvocation,
  expiresAt?: number,
): void {
  const expires = expiresAt !== undefined ? { 'idempotency-expires': rfc3339Offset(expiresAt) } : undefined;
  if ('failure' in done.completion) {
    const { code, message, metadata, stacktrace } = done.completion.failure;
    throw new IngressError(httpStatus(code), message, 'invocation', {
      invocationId: done.id,
      ...(metadata && metadata.length > 0
        ? { metadata: Object.fromEntries(metadata.map((m) => [m.key, m.value])) }
        : {}),
      ...(stacktrace ? { stacktrace } : {}),
      ...(expires ? { headers: expires } : {}),
    });
  }
  const body = Buffer.from(done.completion.ok, 'base64');
  ctx.set('x-restate-id', done.id);
  if (expires) ctx.set(expires);
  ctx.status = 200;
  if (output?.contentType && (body.length > 0 || output.setContentTypeIfEmpty)) {
    ctx.set('content-type', output.contentType);
    ctx.body = body;
  } else {
    ctx.body = body;
    // Koa would label a Buffer application/octet-stream; Restate sends no content type here.
    ctx.remove('content-type');
  }
}
