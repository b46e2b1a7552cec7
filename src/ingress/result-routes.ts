/**
 * `attach` (wait for the result) and `output` (peek at it), and `lookup` (reference-behavior.md
 * §2.4, §2.6, §2.7). An invocation is named by its id, or by what its deterministic id is
 * derived from (model/ids.ts): a workflow id, or service/[key/]handler plus idempotency
 * key. The forms:
 *
 * - `GET /restate/attach|output/{id}`, legacy `GET /restate/invocation/{id}/attach|output`;
 * - `POST /restate/attach|output|lookup` with a JSON target body (target-body.ts);
 * - legacy `GET /restate/workflow/{wf}/{key}/attach|output` and
 *   `GET /restate/invocation/{svc}/[{key}/]{handler}/{idempotencyKey}/attach|output`.
 *
 * Naming is a pure computation: the registry is not asked, so a name that never ran is simply
 * an id nobody has (output 404 `invocation not found`, attach 404 `not found`).
 */
import type { Context } from 'koa';
import type Router from '@koa/router';
import { IngressError } from './errors.js';
import { IdError, parseInvocationId } from '../protocol/ids.js';
import { idempotentInvocationId, workflowRunId } from '../model/ids.js';
import { answerAttach, answerOutput } from './answers.js';
import type { IngressDeps } from './deps.js';
import { methodNotAllowed, notFound } from './errors.js';
import { readBody, segmentsAfter } from './request.js';
import { SerdeError } from '../http/serde-json.js';
import { parseTargetBody, type TargetBody } from './target-body.js';

function checkedId(raw: string): string {
  try {
    parseInvocationId(raw);
    return raw;
  } catch (err) {
    if (err instanceof IdError) throw new IngressError(400, `bad invocation id '${raw}': ${err.message}`);
    throw err;
  }
}

type Op = 'attach' | 'output';
const OPS: readonly string[] = ['attach', 'output'] satisfies Op[];
const answer = (op: Op) => (op === 'attach' ? answerAttach : answerOutput);

/** The invocation a target body names; only an explicit id is checked (§2.7: no existence check). */
function idOfTarget(target: TargetBody): string {
  switch (target.target) {
    case 'invocation':
      return checkedId(target.invocationId);
    case 'workflow':
      return workflowRunId(target.workflowName, target.workflowKey, target.scope);
    case 'idempotentInvocation':
      return idempotentInvocationId(target.service, target.key, target.handler, target.idempotencyKey, target.scope);
  }
}

/**
 * The POST body as a target. A body serde_json would not take answers 500 with serde's text
 * (§2.7): `invalid lookup body` for lookup, `invalid request body` for attach and output.
 * The content type is not looked at.
 */
async function readTarget(ctx: Context, deps: IngressDeps, what: 'lookup' | 'request'): Promise<TargetBody> {
  const body = await readBody(ctx, deps.config.requestSizeLimit);
  try {
    return parseTargetBody(body);
  } catch (err) {
    if (err instanceof SerdeError)
      throw new IngressError(500, `cannot read body: invalid ${what} body: ${err.message}`);
    throw err;
  }
}

/**
 * How to get the invocation a legacy `/restate/invocation/...` path names (`{id}`, or
 * `{service}/[{key}/]{handler}/{idempotencyKey}`), or undefined for any other shape. Deferred,
 * so that a wrong method is reported before a malformed id.
 */
function invocationPathTarget(parts: string[]): (() => string) | undefined {
  const [a = '', b = '', c = '', d = ''] = parts;
  switch (parts.length) {
    case 1:
      return () => checkedId(a);
    case 3:
      return () => idempotentInvocationId(a, undefined, b, c);
    case 4:
      return () => idempotentInvocationId(a, b, c, d);
    default:
      return undefined;
  }
}

export function registerResultRoutes(router: Router, deps: IngressDeps): void {
  const byId = (op: Op) => async (ctx: Context) => {
    if (ctx.method !== 'GET') throw methodNotAllowed();
    await answer(op)(ctx, deps, checkedId(ctx.params['id']!));
  };
  for (const op of ['attach', 'output'] as const) {
    router.all(`/restate/${op}/:id`, byId(op));
    router.all(`/restate/${op}`, async (ctx) => {
      if (ctx.method !== 'POST') throw methodNotAllowed();
      await answer(op)(ctx, deps, idOfTarget(await readTarget(ctx, deps, 'request')));
    });
  }
  router.all('/restate/lookup', async (ctx) => {
    if (ctx.method !== 'POST') throw methodNotAllowed();
    const invocationId = idOfTarget(await readTarget(ctx, deps, 'lookup'));
    ctx.set('content-type', 'application/json');
    ctx.body = JSON.stringify({ invocationId });
  });
  // Legacy forms: the last segment says what to do; any other shape is an unknown resource.
  router.all('/restate/workflow/*rest', async (ctx) => {
    const parts = segmentsAfter(ctx.path, '/restate/workflow');
    const op = parts[2];
    if (parts.length !== 3 || !OPS.includes(op!)) throw notFound();
    if (ctx.method !== 'GET') throw methodNotAllowed();
    await answer(op as Op)(ctx, deps, workflowRunId(parts[0]!, parts[1]!));
  });
  router.all('/restate/invocation/*rest', async (ctx) => {
    const parts = segmentsAfter(ctx.path, '/restate/invocation');
    const op = parts.pop();
    const idOf = invocationPathTarget(parts);
    if (!OPS.includes(op!) || !idOf) throw notFound();
    if (ctx.method !== 'GET') throw methodNotAllowed();
    await answer(op as Op)(ctx, deps, idOf());
  });
}
