/**
 * Operator actions on one invocation: the runtime's `operator` face, as the admin's
 * PATCH /invocations/{id}/… routes use it (src/admin/routes/invocations.ts).
 */
import * as z from 'zod';
import { deploymentChoice, invocationParam } from '../../admin/routes/invocations.js';
import type { OperatorOutcome } from '../../runtime/runtime.js';
import type { McpDeps } from '../deps.js';
import { ADDITIVE, answer, DESTRUCTIVE, tool, type Tool } from '../tool.js';

const invocationId = z.string().describe('inv_…');
const deployment = z.string().optional().describe('`latest`, `keep` or a deployment id (dp_…)');

/** What each outcome means, in words. */
const SAID: Record<OperatorOutcome, string> = {
  done: 'done',
  appended: 'delivered to the handler',
  noop: 'nothing to do',
};

const ACTIONS = {
  cancel_invocation: {
    title: 'Cancel an invocation',
    description:
      'Cancels gracefully: the handler gets a cancellation at its next await and may run compensations; one that has not started is dropped at once. Its caller gets 409 Cancelled.',
    run: (deps: McpDeps, id: string) => deps.runtime.operator.cancel(id),
    destructive: true,
  },
  kill_invocation: {
    title: 'Kill an invocation',
    description:
      'Ends the invocation at once, without running anything more of its handler; its caller gets 409 killed. Prefer cancel_invocation.',
    run: (deps: McpDeps, id: string) => deps.runtime.operator.kill(id),
    destructive: true,
  },
  pause_invocation: {
    title: 'Pause an invocation',
    description: 'Stops retrying it and parks it as paused until resume_invocation.',
    run: (deps: McpDeps, id: string) => deps.runtime.operator.pause(id),
    destructive: false,
  },
  purge_invocation: {
    title: 'Purge an invocation',
    description: 'Forgets a completed invocation (its result, journal, idempotency entry) for good.',
    run: (deps: McpDeps, id: string) => deps.runtime.operator.purge(id),
    destructive: true,
  },
  purge_invocation_journal: {
    title: "Purge an invocation's journal",
    description: 'Deletes the journal of a completed invocation and keeps its result.',
    run: (deps: McpDeps, id: string) => deps.runtime.operator.purgeJournal(id),
    destructive: true,
  },
} as const;

export function operatorTools(deps: McpDeps): Tool[] {
  const actions = Object.entries(ACTIONS).map(([name, action]) =>
    tool(name, {
      title: action.title,
      description: action.description,
      input: { invocation_id: invocationId },
      annotations: action.destructive ? DESTRUCTIVE : { ...ADDITIVE, idempotentHint: true },
      async run({ invocation_id }) {
        const id = invocationParam(invocation_id);
        const outcome = await action.run(deps, id);
        return answer(`${action.title.split(' ')[0]}: ${SAID[outcome]} (${id}).`, { invocation_id: id, outcome });
      },
    }),
  );
  return [
    ...actions,
    tool('resume_invocation', {
      title: 'Resume an invocation',
      description: 'Resumes a paused (or suspended) invocation at once, optionally on another deployment.',
      input: { invocation_id: invocationId, deployment },
      annotations: { ...ADDITIVE, idempotentHint: true },
      async run(args) {
        const id = invocationParam(args.invocation_id);
        const outcome = await deps.runtime.operator.resume(
          id,
          args.deployment !== undefined ? deploymentChoice(args.deployment) : undefined,
        );
        return answer(`Resume: ${SAID[outcome]} (${id}).`, { invocation_id: id, outcome });
      },
    }),
    tool('restart_invocation_as_new', {
      title: 'Restart an invocation as new',
      description:
        'Starts a new invocation with the same input; with `from`, it keeps the journal up to that entry (and replays from there). The old one stays as it is.',
      input: {
        invocation_id: invocationId,
        from: z.number().int().min(0).max(0xffffffff).optional().describe('Keep the journal entries 0..from'),
        deployment,
      },
      annotations: ADDITIVE,
      async run(args) {
        const id = invocationParam(args.invocation_id);
        const { newInvocationId } = await deps.runtime.operator.restartAsNew(id, {
          ...(args.from !== undefined ? { from: args.from } : {}),
          ...(args.deployment !== undefined ? { deployment: deploymentChoice(args.deployment) } : {}),
        });
        return answer(`Restarted ${id} as ${newInvocationId}.`, {
          invocation_id: id,
          new_invocation_id: newInvocationId,
        });
      },
    }),
  ];
}
