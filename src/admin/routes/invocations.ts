/**
 * Invocation management: PATCH /invocations/{id}/cancel|kill|pause|resume|purge|purge-journal|
 * restart-as-new and the deprecated DELETE /invocations/{id}?mode= (reference-behavior.md §3.5).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { DomainError, Unavailable } from '../../errors.js';
import { AdminError, AdminTextError } from '../errors.js';
import { IdError, parseDeploymentId, parseInvocationId } from '../../protocol/ids.js';
import type { DeploymentChoice, OperatorOutcome, Runtime } from '../../runtime/runtime.js';
import { sendEmpty, sendJson } from '../http-io.js';

type Operation = 'cancel' | 'kill' | 'pause' | 'resume' | 'purge' | 'purge-journal';

/** The status of a success, and of a request that had nothing to do (reference-behavior.md §3.5). */
const answers: Record<Operation, { done: number; appended?: number; noop?: number }> = {
  // Restate: 200 when the cancel ended an invocation that had not started, 202 when it was
  // appended to a journal for the handler to see.
  cancel: { done: 200, appended: 202 },
  kill: { done: 200 },
  pause: { done: 202, noop: 200 },
  resume: { done: 200, noop: 200 },
  purge: { done: 200 },
  'purge-journal': { done: 200 },
};

const run: Record<Operation, (rt: Runtime, id: string, ctx: Context) => Promise<OperatorOutcome>> = {
  cancel: (rt, id) => rt.operator.cancel(id),
  kill: (rt, id) => rt.operator.kill(id),
  pause: (rt, id) => rt.operator.pause(id),
  resume: (rt, id, ctx) => rt.operator.resume(id, deploymentQuery(ctx)),
  purge: (rt, id) => rt.operator.purge(id),
  'purge-journal': (rt, id) => rt.operator.purgeJournal(id),
};

/** An invocation id from the path (or an MCP tool's argument), checked: 400 with the reference's text. */
export function invocationParam(raw: string): string {
  try {
    parseInvocationId(raw);
    return raw;
  } catch (err) {
    if (err instanceof IdError)
      throw new AdminError(400, `The request field 'invocation_id' is invalid. Reason: ${err.message}`);
    throw err;
  }
}

/** The last value of a query parameter, as serde's query extractor takes it. */
function queryValue(ctx: Context, name: string): string | undefined {
  const raw = ctx.query[name];
  return Array.isArray(raw) ? raw[raw.length - 1] : raw;
}

/** `?deployment=latest|keep|dp_…` (resume and restart-as-new). */
function deploymentQuery(ctx: Context): DeploymentChoice | undefined {
  const raw = queryValue(ctx, 'deployment');
  return raw === undefined ? undefined : deploymentChoice(raw);
}

/** `latest`, `keep` (any case) or a deployment id. */
export function deploymentChoice(raw: string): DeploymentChoice {
  if (raw.toLowerCase() === 'latest') return { kind: 'latest' };
  if (raw.toLowerCase() === 'keep') return { kind: 'keep' };
  try {
    parseDeploymentId(raw);
  } catch (err) {
    if (err instanceof IdError)
      throw new AdminError(400, `The query parameter 'deployment' is invalid. Reason: ${err.message}`);
    throw err;
  }
  return { kind: 'id', id: raw };
}

/** `?from=N`, a u32. */
function fromQuery(ctx: Context): number | undefined {
  const raw = queryValue(ctx, 'from');
  if (raw === undefined) return undefined;
  if (!/^\+?\d+$/.test(raw)) {
    const reason = raw === '' ? 'cannot parse integer from empty string' : 'invalid digit found in string';
    throw new AdminTextError(400, `Failed to deserialize query string: from: ${reason}`);
  }
  const n = Number(raw.replace(/^\+/, ''));
  if (n > 0xffffffff)
    throw new AdminTextError(400, 'Failed to deserialize query string: from: number too large to fit in target type');
  return n;
}

async function perform(rt: Runtime, op: Operation, id: string, ctx: Context): Promise<number> {
  const outcome = await run[op](rt, id, ctx);
  const a = answers[op];
  return outcome === 'done' ? a.done : (a[outcome] ?? a.done);
}

async function restartAsNew(rt: Runtime, ctx: Context): Promise<void> {
  // The query string is an extractor (text errors), checked before the id the handler parses.
  const from = fromQuery(ctx);
  const id = invocationParam(ctx.params['id']!);
  const deployment = deploymentQuery(ctx);
  const { newInvocationId } = await rt.operator.restartAsNew(id, {
    ...(from !== undefined ? { from } : {}),
    ...(deployment ? { deployment } : {}),
  });
  sendJson(ctx, 200, { new_invocation_id: newInvocationId });
}

export function invocationRoutes(runtime: Runtime) {
  return (router: Router): void => {
    for (const op of Object.keys(answers) as Operation[]) {
      router.patch(`/invocations/:id/${op}`, async (ctx: Context) => {
        sendEmpty(ctx, await perform(runtime, op, invocationParam(ctx.params['id']!), ctx));
      });
    }
    router.patch('/invocations/:id/restart-as-new', async (ctx: Context) => {
      await restartAsNew(runtime, ctx);
    });
    // Deprecated form: 202 for any well-formed id, whatever happened (§3.5).
    router.delete('/invocations/:id', async (ctx: Context) => {
      const raw = typeof ctx.query['mode'] === 'string' ? ctx.query['mode'] : 'cancel';
      const mode = raw.toLowerCase();
      if (
        !['cancel', 'kill', 'purge'].includes(mode) ||
        (raw !== raw.toLowerCase() && raw !== mode[0]!.toUpperCase() + mode.slice(1))
      ) {
        throw new AdminTextError(
          400,
          `Failed to deserialize query string: mode: unknown variant \`${raw}\`, expected one of \`Cancel\`, \`cancel\`, \`Kill\`, \`kill\`, \`Purge\`, \`purge\``,
        );
      }
      const id = invocationParam(ctx.params['id']!);
      try {
        await runtime.operator[mode as 'cancel' | 'kill' | 'purge'](id);
      } catch (err) {
        // The deprecated endpoint answers 202 whatever the operation found (a malformed id is
        // still a 400, and an unreachable store found nothing).
        if (!(err instanceof DomainError) || err instanceof Unavailable) throw err;
      }
      sendEmpty(ctx, 202);
    });
  };
}
