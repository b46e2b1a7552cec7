/**
 * Invocation management: PATCH /invocations/{id}/cancel|kill|pause|resume|purge and the
 * deprecated DELETE /invocations/{id}?mode= (reference-behavior.md §3.5).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { AdminError, AdminTextError } from '../../errors.js';
import { IdError, parseInvocationId } from '../../protocol/ids.js';
import type { Runtime } from '../../runtime/runtime.js';
import * as operator from '../../runtime/operator.js';
import { sendEmpty } from '../http-io.js';

type Operation = 'cancel' | 'kill' | 'pause' | 'resume' | 'purge';

/** Status for success, and the message for `completed`/`notRunning`/`notCompleted`, per operation. */
const answers: Record<Operation, { done: number; noop?: number; completed: string; notRunning?: string }> = {
  cancel: { done: 202, completed: 'was already completed.' },
  kill: { done: 200, completed: 'was already completed.' },
  pause: { done: 202, noop: 200, completed: 'is not running, cannot be paused.', notRunning: 'is not running, cannot be paused.' },
  resume: { done: 200, noop: 200, completed: 'is completed, cannot be resumed.' },
  purge: { done: 200, completed: '' },
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

async function perform(rt: Runtime, op: Operation, id: string): Promise<number> {
  const outcome = await operator[op](rt, id);
  const a = answers[op];
  switch (outcome) {
    case 'done':
      return a.done;
    case 'noop':
      return a.noop ?? a.done;
    case 'notFound':
      throw new AdminError(404, `The requested invocation '${id}' does not exist`);
    case 'completed':
      throw new AdminError(409, `The invocation '${id}' ${a.completed}`);
    case 'notRunning':
      throw new AdminError(409, `The invocation '${id}' ${a.notRunning ?? a.completed}`);
    case 'notCompleted':
      throw new AdminError(409, `The invocation '${id}' is not yet completed.`);
  }
}

export function invocationRoutes(runtime: Runtime) {
  return (router: Router): void => {
    for (const op of Object.keys(answers) as Operation[]) {
      router.patch(`/invocations/:id/${op}`, async (ctx: Context) => {
        sendEmpty(ctx, await perform(runtime, op, invocationParam(ctx.params['id']!)));
      });
    }
    // Deprecated form: always 202, whatever happened (§3.5).
    router.delete('/invocations/:id', async (ctx: Context) => {
      const raw = typeof ctx.query['mode'] === 'string' ? ctx.query['mode'] : 'cancel';
      const mode = raw.toLowerCase();
      if (!['cancel', 'kill', 'purge'].includes(mode) || raw !== raw.toLowerCase() && raw !== mode[0]!.toUpperCase() + mode.slice(1)) {
        throw new AdminTextError(
          400,
          `Failed to deserialize query string: mode: unknown variant \`${raw}\`, expected one of \`Cancel\`, \`cancel\`, \`Kill\`, \`kill\`, \`Purge\`, \`purge\``,
        );
      }
      try {
        await operator[mode as Operation](runtime, invocationParam(ctx.params['id']!));
      } catch {
        // The deprecated endpoint answers 202 whatever the outcome.
      }
      sendEmpty(ctx, 202);
    });
  };
}
