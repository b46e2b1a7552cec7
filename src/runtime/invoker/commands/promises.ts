/** The promise commands of workflow handlers (promise-records.ts holds the promises themselves). */
import { ProtocolCode } from '../../../errors.js';
import type { JournalEntry } from '../../../store/types.js';
import { CommandRejected, emptyOutcome, type CommandOutcome, type CommandScope } from './scope.js';

/** §9.2: restate-server refuses promise commands outside a workflow. */
export async function promiseCommand(scope: CommandScope, entry: JournalEntry): Promise<CommandOutcome> {
  if (scope.target.serviceTy !== 'Workflow' || !scope.promises) {
    throw new CommandRejected(ProtocolCode.protocolViolation, 'promise commands are only allowed in workflow handlers');
  }
  const r = await scope.promises.apply(scope.invocationId, entry, () => scope.nextMessageId());
  return { ...emptyOutcome(), notifications: r.notifications, outbox: r.outbox };
}
