/**
 * `attach` (wait for the result) and `output` (peek at it) by invocation id, in the 1.7 form
 * `/restate/attach|output/{id}` and the legacy `/restate/invocation/{id}/attach|output`
 * (reference-behavior.md §2.6).
 */
import type { Context } from 'koa';
import type Router from '@koa/router';
import { IngressError } from '../errors.js';
import { IdError, parseInvocationId } from '../protocol/ids.js';
import type { IngressDeps } from './invoke-routes.js';
import { writeCompletion } from './results.js';
import { methodNotAllowed } from './errors.js';

function checkedId(raw: string): string {
  try {
    parseInvocationId(raw);
    return raw;
  } catch (err) {
    if (err instanceof IdError) throw new IngressError(400, `bad invocation id '${raw}': ${err.message}`);
    throw err;
  }
}

/** Completed invocations stay readable for their journal retention; that end is `idempotency-expires`. */
function expiresAt(deps: IngressDeps, service: string, handler: string, completedAt: number): number {
  const retention = deps.registry.resolveHandler(service, handler)?.journalRetention ?? 24 * 3_600_000;
  return completedAt + retention;
}

async function output(ctx: Context, deps: IngressDeps, raw: string): Promise<void> {
  const id = checkedId(raw);
  const out = await deps.runtime.output(id);
  if (out.state === 'missing') throw new IngressError(404, 'invocation not found');
  if (out.state === 'pending') throw new IngressError(470, 'the invocation exists but has not completed yet');
  writeCompletion(ctx, deps.registry, out, expiresAt(deps, out.target.service, out.target.handler, out.completedAt));
}

async function attach(ctx: Context, deps: IngressDeps, raw: string): Promise<void> {
  await answerAttach(ctx, deps, checkedId(raw));
}

/**
 * The outcome of an invocation, waiting for it if it still runs. A result that was already
 * stored carries `idempotency-expires`; one waited for does not (reference §2.6).
 */
export async function answerAttach(ctx: Context, deps: IngressDeps, id: string): Promise<void> {
  const before = await deps.runtime.output(id);
  if (before.state === 'completed') {
    writeCompletion(ctx, deps.registry, before, expiresAt(deps, before.target.service, before.target.handler, before.completedAt));
    return;
  }
  const done = before.state === 'missing' ? undefined : await deps.runtime.attach(id);
  if (!done) throw new IngressError(404, 'not found', 'invocation', { invocationId: id });
  writeCompletion(ctx, deps.registry, done);
}

export function registerResultRoutes(router: Router, deps: IngressDeps): void {
  const only = (handler: (ctx: Context, deps: IngressDeps, id: string) => Promise<void>) => async (ctx: Context) => {
    if (ctx.method !== 'GET') throw methodNotAllowed();
    await handler(ctx, deps, ctx.params['id']!);
  };
  router.all('/restate/attach/:id', only(attach));
  router.all('/restate/output/:id', only(output));
  router.all('/restate/invocation/:id/attach', only(attach));
  router.all('/restate/invocation/:id/output', only(output));
}
