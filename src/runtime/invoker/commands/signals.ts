/**
 * Completing an awakeable and sending a signal (service-protocol.md §9.6, §9.9): both become a
 * signal for another invocation, by index (CANCEL, awakeables) or by name (`ctx.signal(name)`),
 * carried by the outbox.
 */
import { decodeCompleteAwakeableCommand, decodeSendSignalCommand, MessageType } from '../../../protocol/messages.js';
import { invocationIdToString, parseAwakeableId } from '../../../protocol/ids.js';
import type { JournalEntry } from '../../../store/types.js';
import type { OutboxBody } from '../../../model/outbox.js';
import { CommandRejected, emptyOutcome, type CommandOutcome, type CommandScope } from './scope.js';

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

export function signalCommand(scope: CommandScope, entry: JournalEntry): CommandOutcome {
  let body: OutboxBody;
  if (entry.type === MessageType.CompleteAwakeableCommand) {
    const c = decodeCompleteAwakeableCommand(entry.payload);
    const awk = parseAwakeableId(c.awakeableId);
    if (awk.kind !== 'signal') throw new CommandRejected(501, 'awakeables of pre-v5 journals are not supported');
    body = {
      kind: 'signal',
      invocationId: invocationIdToString(awk.invocationId),
      signalId: awk.signalIndex,
      ...(c.failure ? { failure: c.failure } : { value: base64(c.value ?? new Uint8Array()) }),
    };
  } else {
    const c = decodeSendSignalCommand(entry.payload);
    body = {
      kind: 'signal',
      invocationId: c.targetInvocationId,
      ...(c.idx !== undefined ? { signalId: c.idx } : { signalName: c.name ?? '' }),
      ...(c.failure ? { failure: c.failure } : c.value ? { value: base64(c.value) } : {}),
    };
  }
  const out = emptyOutcome();
  out.outbox.push({ id: scope.nextMessageId(), body });
  return out;
}
