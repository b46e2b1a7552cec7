/**
 * State commands of virtual objects and workflows (service-protocol.md §9.2): writes go into
 * the batch's commit; lazy reads are answered at once, from the store plus the writes of
 * earlier commands of the same batch.
 */
import { storedService } from '../../../model/state-owner.js';
import {
  decodeClearStateCommand,
  decodeGetLazyStateCommand,
  decodeGetLazyStateKeysCommand,
  decodeSetStateCommand,
  encodeNotification,
  MessageType,
} from '../../../protocol/messages.js';
import { ProtocolCode } from '../../../errors.js';
import type { JournalEntry } from '../../../store/types.js';
import { CommandRejected, emptyOutcome, type CommandOutcome, type CommandScope } from './scope.js';

function requireKeyed(scope: CommandScope, write: boolean): void {
  if (scope.target.serviceTy === 'Service') {
    throw new CommandRejected(
      ProtocolCode.protocolViolation,
      'state commands are not allowed in a plain service handler',
    );
  }
  if (write && scope.handlerTy === 'Shared') {
    throw new CommandRejected(ProtocolCode.protocolViolation, 'state writes are not allowed in a shared handler');
  }
}

/** The stored state as this batch sees it: a lazy read sees the writes stored before it, also those of its own batch. */
function withPending(scope: CommandScope, state: Map<string, Uint8Array>): Map<string, Uint8Array> {
  for (const op of scope.pendingState) {
    if (op.op === 'set') state.set(op.key, op.value);
    else if (op.op === 'clear') state.delete(op.key);
    else state.clear();
  }
  return state;
}

const utf8 = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

export async function stateCommand(scope: CommandScope, entry: JournalEntry): Promise<CommandOutcome> {
  const out = emptyOutcome();
  switch (entry.type) {
    case MessageType.SetStateCommand: {
      requireKeyed(scope, true);
      const c = decodeSetStateCommand(entry.payload);
      out.state.push({ op: 'set', key: utf8(c.key), value: c.value });
      break;
    }
    case MessageType.ClearStateCommand:
      requireKeyed(scope, true);
      out.state.push({ op: 'clear', key: utf8(decodeClearStateCommand(entry.payload).key) });
      break;
    case MessageType.ClearAllStateCommand:
      requireKeyed(scope, true);
      out.state.push({ op: 'clearAll' });
      break;
    case MessageType.GetLazyStateCommand: {
      requireKeyed(scope, false);
      const c = decodeGetLazyStateCommand(entry.payload);
      const key = utf8(c.key);
      const stored = await scope.store.readStateKey(
        scope.partition,
        storedService(scope.target),
        scope.target.key!,
        key,
      );
      const value = withPending(scope, stored === undefined ? new Map() : new Map([[key, stored]])).get(key);
      const n =
        value === undefined
          ? { completionId: c.resultCompletionId, void: true as const }
          : { completionId: c.resultCompletionId, value };
      out.notifications.push({ type: MessageType.GetLazyStateCompletionNotification, payload: encodeNotification(n) });
      break;
    }
    case MessageType.GetLazyStateKeysCommand: {
      requireKeyed(scope, false);
      const c = decodeGetLazyStateKeysCommand(entry.payload);
      const state = withPending(
        scope,
        await scope.store.readState(scope.partition, storedService(scope.target), scope.target.key!),
      );
      const stateKeys = [...state.keys()].sort().map((k) => Buffer.from(k, 'utf8'));
      out.notifications.push({
        type: MessageType.GetLazyStateKeysCompletionNotification,
        payload: encodeNotification({ completionId: c.resultCompletionId, stateKeys }),
      });
      break;
    }
  }
  return out;
}
