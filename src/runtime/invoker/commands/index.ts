/**
 * What storing one SDK command implies: the dispatch to one handler per command family.
 * Output, Run, eager state reads and custom entries are stored and replayed, nothing else.
 */
import { decodeSleepCommand, MessageType } from '../../../protocol/messages.js';
import { ProtocolCode } from '../../../errors.js';
import type { JournalEntry } from '../../../store/types.js';
import { timerOf } from '../../../model/timers.js';
import { attachCommand } from './attach.js';
import { callCommand } from './calls.js';
import { promiseCommand } from './promises.js';
import { CommandRejected, emptyOutcome, type CommandOutcome, type CommandScope } from './scope.js';
import { signalCommand } from './signals.js';
import { stateCommand } from './state.js';

export { CommandRejected, type CommandOutcome, type CommandScope, type TargetOutcome } from './scope.js';

export async function commandOutcome(scope: CommandScope, entry: JournalEntry): Promise<CommandOutcome> {
  switch (entry.type) {
    case MessageType.SleepCommand: {
      const c = decodeSleepCommand(entry.payload);
      return {
        ...emptyOutcome(),
        timersAdd: [{ ...timerOf.sleep(scope.invocationId, c.resultCompletionId), dueAt: c.wakeUpTime }],
      };
    }
    case MessageType.SetStateCommand:
    case MessageType.ClearStateCommand:
    case MessageType.ClearAllStateCommand:
    case MessageType.GetLazyStateCommand:
    case MessageType.GetLazyStateKeysCommand:
      return stateCommand(scope, entry);
    case MessageType.CallCommand:
    case MessageType.OneWayCallCommand:
      return callCommand(scope, entry);
    case MessageType.CompleteAwakeableCommand:
    case MessageType.SendSignalCommand:
      return signalCommand(scope, entry);
    case MessageType.GetPromiseCommand:
    case MessageType.PeekPromiseCommand:
    case MessageType.CompletePromiseCommand:
      return promiseCommand(scope, entry);
    case MessageType.AttachInvocationCommand:
    case MessageType.GetInvocationOutputCommand:
      return attachCommand(scope, entry);
    case MessageType.InputCommand:
      throw new CommandRejected(ProtocolCode.protocolViolation, 'the SDK must not send an Input command');
    default:
      return emptyOutcome();
  }
}

/** Commands whose batch must run under their workflow's promise queue (invoker/attempt.ts). */
export { PROMISE_COMMANDS } from './promise-records.js';
