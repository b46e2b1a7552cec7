/**
 * AttachInvocation and GetInvocationOutput by invocation id (service-protocol.md §6.2, §9.9).
 *
 * Get-output is answered in the command's own commit: the output, `void` while the target
 * runs, not-found otherwise. Attach is answered there only when the target has completed;
 * otherwise it waits for the target after the commit (services/attachments.ts). Workflow and
 * idempotent-request targets fail the command's promise.
 */
import {
  decodeAttachInvocationCommand,
  decodeGetInvocationOutputCommand,
  encodeNotification,
  MessageType,
  type Notification,
} from '../../../protocol/messages.js';
import { IdError, parseInvocationId } from '../../../protocol/ids.js';
import type { JournalEntry } from '../../../store/types.js';
import { completionResult, NOT_FOUND } from '../../kernel/results.js';
import { emptyOutcome, type CommandOutcome, type CommandScope } from './scope.js';

export async function attachCommand(scope: CommandScope, entry: JournalEntry): Promise<CommandOutcome> {
  const out = emptyOutcome();
  const attach = entry.type === MessageType.AttachInvocationCommand;
  const c = attach ? decodeAttachInvocationCommand(entry.payload) : decodeGetInvocationOutputCommand(entry.payload);
  const type = attach
    ? MessageType.AttachInvocationCompletionNotification
    : MessageType.GetInvocationOutputCompletionNotification;
  const answer = (result: Omit<Notification, 'completionId'>) => {
    out.notifications.push({ type, payload: encodeNotification({ completionId: c.resultCompletionId, ...result }) });
    return out;
  };
  const targetId = c.invocationId;
  if (targetId === undefined)
    return answer({
      failure: { code: 501, message: 'attaching to workflow or idempotent-request targets is not supported yet' },
    });
  try {
    parseInvocationId(targetId);
  } catch (err) {
    if (!(err instanceof IdError)) throw err;
    return answer({ failure: { code: 400, message: `bad invocation id '${targetId}': ${err.message}` } });
  }
  const target = await scope.outcomeOf(targetId);
  if (target.state === 'completed') return answer(completionResult(target.completion));
  if (!attach) return answer(target.state === 'pending' ? { void: true } : { failure: NOT_FOUND });
  out.attachWaits.push({ completionId: c.resultCompletionId, targetId });
  return out;
}
