/**
 * Invocation management: PATCH /invocations/{id}/cancel|kill|pause|resume|purge|purge-journal|
 * restart-as-new and the deprecated DELETE /invocations/{id}?mode= (reference-behavior.md §3.5).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { AdminError, AdminTextError } from '../../errors.js';
import { IdError, parseDeploymentId, parseInvocationId } from '../../protocol/ids.js';
import type { Runtime } from '../../runtime/runtime.js';
import * as operator from '../../runtime/operator.js';
import { StoreUnavailable } from '../../store/types.js';
import { sendEmpty, sendJson } from '../http-io.js';

type Operation = 'cancel' | 'kill' | 'pause' | 'resume' | 'purge' | 'purge-journal';

/** Status for success, and the message for `completed`/`notRunning`, per operation. */
const answers: Record<Operation, { done: number; noop?: number; completed: string; notRunning?: string }> = {
  cancel: { done: 202, completed: 'was already completed.' },
  kill: { done: 200, completed: 'was already completed.' },
  pause: { done: 202, noop: 200, completed: 'is not running, cannot be paused.', notRunning: 'is not running, cannot be paused.' },
  resume: { done: 200, noop: 200, completed: 'is completed, cannot be resumed.' },
  purge: { done: 200, completed: '' },
  'purge-journal': { done: 200, completed: '' },
};

const run: Record<Operation, (rt: Runtime, id: string, ctx: Context) => Promise<operator.Outcome>> = {
  cancel: (rt, id) => operator.cancel(rt, id),
  kill: (rt, id) => operator.kill(rt, id),
  pause: (rt, id) => operator.pause(rt, id),
  resume: (rt, id, ctx) => operator.resume(rt, id, deploymentQuery(ctx)),
  purge: (rt, id) => operator.purge(rt, id),
  'purge-journal': (rt, id) => operator.purgeJournal(rt, id),
};

function invocationParam(raw: string): string {
  try {
    parseInvocationId(raw);
    return raw;
  } catch (err) {
    if (err instanceof IdError) throw new AdminError(400, `The request field 'invocation_id' is invalid. Reason: ${err.message}`);
    throw err;
  }
}

/** The last value of a query parameter, as serde's query extractor takes it. */
function queryValue(ctx: Context, name: string): string | undefined {
  const raw = ctx.query[name];
  return Array.isArray(raw) ? raw[raw.length - 1] : raw;
}

/** `?deployment=latest|keep|dp_…` (resume and restart-as-new). */
function deploymentQuery(ctx: Context): operator.DeploymentChoice | undefined {
  const raw = queryValue(ctx, 'deployment');
  if (raw === undefined) return undefined;
  if (raw.toLowerCase() === 'latest') return { kind: 'latest' };
  if (raw.toLowerCase() === 'keep') return { kind: 'keep' };
  try {
    parseDeploymentId(raw);
  } catch (err) {
    if (err instanceof IdError) throw new AdminError(400, `The query parameter 'deployment' is invalid. Reason: ${err.message}`);
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
  if (n > 0xffffffff) throw new AdminTextError(400, 'Failed to deserialize query string: from: number too large to fit in target type');
  return n;
}

function notFound(id: string): AdminError {
  return new AdminError(404, `The requested invocation '${id}' does not exist`);
}

async function perform(rt: Runtime, op: Operation, id: string, ctx: Context): Promise<number> {
  const outcome = await run[op](rt, id, ctx);
  const a = answers[op];
  switch (outcome) {
    case 'done':
      return a.done;
    case 'noop':
      return a.noop ?? a.done;
    case 'notFound':
      throw notFound(id);
    case 'completed':
      throw new AdminError(409, `The invocation '${id}' ${a.completed}`);
    case 'notRunning':
      throw new AdminError(409, `The invocation '${id}' ${a.notRunning ?? a.completed}`);
    case 'notCompleted':
      throw new AdminError(409, `The invocation '${id}' is not yet completed.`);
    case 'cannotChangeDeployment':
      throw new AdminError(
        409,
        `The invocation '${id}' is still running or the deployment id is not pinned yet, deployment id cannot be changed.`,
      );
    case 'unknownDeployment':
      throw new AdminError(404, `The requested deployment '${queryValue(ctx, 'deployment') ?? ''}' does not exist`);
  }
}

async function restartAsNew(rt: Runtime, ctx: Context): Promise<void> {
  // The query string is an extractor (text errors), checked before the id the handler parses.
  const from = fromQuery(ctx);
  const id = invocationParam(ctx.params['id']!);
  const deployment = deploymentQuery(ctx);
  const result = await operator.restartAsNew(rt, id, { ...(from !== undefined ? { from } : {}), ...(deployment ? { deployment } : {}) });
  switch (result.outcome) {
    case 'done':
      return sendJson(ctx, 200, { new_invocation_id: result.newInvocationId });
    case 'notFound':
      throw notFound(id);
    case 'stillRunning':
      throw new AdminError(409, `The invocation '${id}' is still running.`);
    case 'unsupported':
      throw new AdminError(
        422,
        `Restarting the invocation '${id}' is not supported. Restarting workflows is not supported, and restarting invocations created using the old service protocol.`,
      );
    case 'inputGone':
      throw new AdminError(
        410,
        `The invocation '${id}' cannot be restarted because the input is not available. This indicates that the journal was already purged, or not retained at all.`,
      );
    case 'incompletePrefix':
      throw new AdminError(400, `The prefix of the journal '${id}' up to 'from' (included) contains some Commands without respective Completions.`);
    case 'unknownDeployment':
      throw new AdminError(404, `The requested deployment '${queryValue(ctx, 'deployment') ?? ''}' does not exist`);
  }
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
      if (!['cancel', 'kill', 'purge'].includes(mode) || raw !== raw.toLowerCase() && raw !== mode[0]!.toUpperCase() + mode.slice(1)) {
        throw new AdminTextError(
          400,
          `Failed to deserialize query string: mode: unknown variant \`${raw}\`, expected one of \`Cancel\`, \`cancel\`, \`Kill\`, \`kill\`, \`Purge\`, \`purge\``,
        );
      }
      const id = invocationParam(ctx.params['id']!);
      // The deprecated endpoint answers 202 whatever the outcome; an unreachable store is no outcome.
      await operator[mode as 'cancel' | 'kill' | 'purge'](runtime, id).catch((err: unknown) => {
        if (err instanceof StoreUnavailable) throw err;
      });
      sendEmpty(ctx, 202);
    });
  };
}
