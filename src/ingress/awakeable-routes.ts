/**
 * Completing awakeables from outside: `POST /restate/a/{id}/resolve|reject` and the alias
 * `/restate/awakeables/{id}/resolve|reject` (reference-behavior.md §2.8).
 *
 * The body bytes are the value (any content type, empty allowed); a rejection's body text is
 * the failure message, with code 500. The answer is 202 with no body and no content type, and
 * it is sent only once the signal is stored in the target's journal. Like Restate, the target
 * is not checked: an unknown or already completed awakeable is still accepted.
 */
import type { Context } from 'koa';
import type Router from '@koa/router';
import { IngressError } from './errors.js';
import { IdError, invocationIdToString, parseAwakeableId, type AwakeableTarget } from '../protocol/ids.js';
import type { IngressDeps } from './deps.js';
import { readBody } from './request.js';
import { methodNotAllowed, notFound } from './errors.js';

function checkedAwakeableId(raw: string): AwakeableTarget {
  try {
    return parseAwakeableId(raw);
  } catch (err) {
    if (err instanceof IdError) throw new IngressError(400, `bad awakeable id '${raw}': ${err.message}`);
    throw err;
  }
}

/**
 * Stores an awakeable's completion in its invocation's journal; resolves once it is durable.
 * Shared with the admin's MCP endpoint (src/mcp/). `body` is read once the id is known good.
 */
export async function completeAwakeable(
  deps: IngressDeps,
  rawId: string,
  op: 'resolve' | 'reject',
  body: () => Promise<Buffer>,
): Promise<void> {
  const target = checkedAwakeableId(rawId);
  const bytes = await body();
  // `prom_1…` ids index journal entries of v1–v4 journals (§9.6); this server never hands
  // them out, so they cannot name anything here: accepted and dropped, as an unknown id.
  if (target.kind === 'signal') {
    const result = op === 'resolve' ? { value: bytes } : { failure: { code: 500, message: bytes.toString('utf8') } };
    await deps.runtime.signal(invocationIdToString(target.invocationId), target.signalIndex, result);
  }
}

async function complete(ctx: Context, deps: IngressDeps): Promise<void> {
  const op = ctx.params['op'];
  if (op !== 'resolve' && op !== 'reject') throw notFound();
  if (ctx.method !== 'POST') throw methodNotAllowed();
  await completeAwakeable(deps, ctx.params['id']!, op, () => readBody(ctx, deps.config.requestSizeLimit));
  // An explicit null body first (Koa would turn it into 204), then the status: no body, no content type.
  ctx.body = null;
  ctx.status = 202;
}

export function registerAwakeableRoutes(router: Router, deps: IngressDeps): void {
  const handler = (ctx: Context) => complete(ctx, deps);
  router.all('/restate/a/:id/:op', handler);
  router.all('/restate/awakeables/:id/:op', handler);
}
