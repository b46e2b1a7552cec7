/**
 * What storing one SDK command implies (service-protocol.md §9, §16b step 4).
 *
 * A command is appended to the journal verbatim; this module says what else goes into the
 * same commit: the notifications the server answers with at once (invocation ids of calls,
 * lazy state reads), timers, outbox messages and state writes. Nothing here performs I/O
 * beyond reads: the caller commits, then performs.
 */
import type { JournalEntry, OutboxMessage, StateOp, Store, Timer } from '../store/types.js';
import {
  decodeAttachInvocationCommand,
  decodeCallCommand,
  decodeClearStateCommand,
  decodeCompleteAwakeableCommand,
  decodeGetInvocationOutputCommand,
  decodeGetLazyStateCommand,
  decodeGetLazyStateKeysCommand,
  decodeOneWayCallCommand,
  decodeSendSignalCommand,
  decodeSetStateCommand,
  decodeSleepCommand,
  encodeNotification,
  MessageType,
  type Notification,
} from '../protocol/messages.js';
import { IdError, invocationIdToString, newInvocationId, parseAwakeableId, parseInvocationId, partitionKeyOf, randomPartitionKey } from '../protocol/ids.js';
import type { Registry } from '../registry/registry.js';
import type { Target } from '../../machines/invocation.js';
import { timerKey } from './timer-keys.js';
import type { OutboxBody } from './outbox.js';
import type { PromiseChanges } from './promises.js';
import { idempotentInvocationId, workflowRunId } from './identity.js';
import { completionResult, NOT_FOUND, targetOutcome } from './attachments.js';

/** A command the server cannot accept: the attempt fails and is retried (Restate's precondition errors). */
export class CommandRejected extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'CommandRejected';
  }
}

export interface CommandScope {
  invocationId: string;
  partition: number;
  target: Target;
  handlerTy: 'Exclusive' | 'Shared' | 'Workflow' | undefined;
  store: Store;
  registry: Registry;
  now: number;
  /** The fixed partition count, to find another invocation's partition. */
  partitions: number;
  /** State writes of earlier commands of the same chunk: not in the store before its commit. */
  pendingState: readonly StateOp[];
  /** Index of the next outbox message of this step, to keep outbox ids unique and stable. */
  nextMessageId(): string;
  /** Set when the chunk holds promise commands: its workflow's promises, under their queue. */
  promises?: PromiseChanges;
}

export interface CommandOutcome {
  notifications: JournalEntry[];
  timersAdd: Timer[];
  outbox: OutboxMessage[];
  state: StateOp[];
  /** Attach commands whose target has not completed: to be answered once it does, after the commit. */
  attachWaits: Array<{ completionId: number; targetId: string }>;
}

const notification = (type: number, n: Notification): JournalEntry => ({ type, payload: encodeNotification(n) });

function requireKeyed(scope: CommandScope, write: boolean): void {
  if (scope.target.serviceTy === 'Service') {
    throw new CommandRejected(571, 'state commands are not allowed in a plain service handler');
  }
  if (write && scope.handlerTy === 'Shared') {
    throw new CommandRejected(571, 'state writes are not allowed in a shared handler');
  }
}

function resolveCallee(scope: CommandScope, service: string, handler: string, key: string): { target: Target; partitionKey: bigint; workflowRun: boolean } {
  const resolved = scope.registry.resolveHandler(service, handler);
  if (!resolved) throw new CommandRejected(404, `service '${service}' or its handler '${handler}' not found`);
  const ty = resolved.service.ty;
  const keyed = ty !== 'Service';
  return {
    target: { service, handler, serviceTy: ty, ...(keyed ? { key } : {}) },
    partitionKey: keyed ? partitionKeyOf(key) : randomPartitionKey(),
    workflowRun: ty === 'Workflow' && resolved.handler.ty === 'Workflow',
  };
}

/** §9.2: a lazy read sees the writes stored before it, also those of its own chunk. */
function withPending(scope: CommandScope, state: Map<string, Uint8Array>): Map<string, Uint8Array> {
  for (const op of scope.pendingState) {
    if (op.op === 'set') state.set(op.key, op.value);
    else if (op.op === 'clear') state.delete(op.key);
    else state.clear();
  }
  return state;
}

export async function commandOutcome(scope: CommandScope, entry: JournalEntry): Promise<CommandOutcome> {
  const out: CommandOutcome = { notifications: [], timersAdd: [], outbox: [], state: [], attachWaits: [] };
  switch (entry.type) {
    case MessageType.SleepCommand: {
      const c = decodeSleepCommand(entry.payload);
      out.timersAdd.push({ key: timerKey.sleep(scope.invocationId, c.resultCompletionId), dueAt: c.wakeUpTime });
      break;
    }
    case MessageType.SetStateCommand: {
      requireKeyed(scope, true);
      const c = decodeSetStateCommand(entry.payload);
      out.state.push({ op: 'set', key: Buffer.from(c.key).toString('utf8'), value: c.value });
      break;
    }
    case MessageType.ClearStateCommand: {
      requireKeyed(scope, true);
      out.state.push({ op: 'clear', key: Buffer.from(decodeClearStateCommand(entry.payload).key).toString('utf8') });
      break;
    }
    case MessageType.ClearAllStateCommand:
      requireKeyed(scope, true);
      out.state.push({ op: 'clearAll' });
      break;
    case MessageType.GetLazyStateCommand: {
      requireKeyed(scope, false);
      const c = decodeGetLazyStateCommand(entry.payload);
      const key = Buffer.from(c.key).toString('utf8');
      const stored = await scope.store.readStateKey(scope.partition, scope.target.service, scope.target.key!, key);
      const value = withPending(scope, stored === undefined ? new Map() : new Map([[key, stored]])).get(key);
      out.notifications.push(
        notification(MessageType.GetLazyStateCompletionNotification, value === undefined ? { completionId: c.resultCompletionId, void: true } : { completionId: c.resultCompletionId, value }),
      );
      break;
    }
    case MessageType.GetLazyStateKeysCommand: {
      requireKeyed(scope, false);
      const c = decodeGetLazyStateKeysCommand(entry.payload);
      const state = withPending(scope, await scope.store.readState(scope.partition, scope.target.service, scope.target.key!));
      const stateKeys = [...state.keys()].sort().map((k) => Buffer.from(k, 'utf8'));
      out.notifications.push(notification(MessageType.GetLazyStateKeysCompletionNotification, { completionId: c.resultCompletionId, stateKeys }));
      break;
    }
    case MessageType.CallCommand:
    case MessageType.OneWayCallCommand: {
      const isCall = entry.type === MessageType.CallCommand;
      const c = isCall ? decodeCallCommand(entry.payload) : decodeOneWayCallCommand(entry.payload);
      const { target, partitionKey, workflowRun } = resolveCallee(scope, c.serviceName, c.handlerName, c.key);
      // A workflow run and an idempotent call name one invocation, whoever makes them (identity.ts).
      const calleeId = workflowRun
        ? workflowRunId(target.service, c.key)
        : c.idempotencyKey !== undefined
          ? idempotentInvocationId(target.service, target.key, target.handler, c.idempotencyKey)
          : invocationIdToString(newInvocationId(partitionKey));
      const body: OutboxBody = {
        kind: 'invoke',
        invocationId: calleeId,
        target,
        input: Buffer.from(c.parameter).toString('base64'),
        headers: c.headers,
        ...(isCall ? { caller: { invocationId: scope.invocationId, completionId: (c as { resultCompletionId: number }).resultCompletionId } } : {}),
        ...('invokeTime' in c && c.invokeTime > 0 ? { executeAt: c.invokeTime } : {}),
        ...(c.idempotencyKey !== undefined ? { idempotencyKey: c.idempotencyKey } : {}),
      };
      out.outbox.push({ id: scope.nextMessageId(), body });
      out.notifications.push(
        notification(MessageType.CallInvocationIdCompletionNotification, { completionId: c.invocationIdNotificationIdx, invocationId: calleeId }),
      );
      break;
    }
    case MessageType.CompleteAwakeableCommand: {
      const c = decodeCompleteAwakeableCommand(entry.payload);
      const awk = parseAwakeableId(c.awakeableId);
      if (awk.kind !== 'signal') throw new CommandRejected(501, 'awakeables of pre-v5 journals are not supported');
      const body: OutboxBody = {
        kind: 'signal',
        invocationId: invocationIdToString(awk.invocationId),
        signalId: awk.signalIndex,
        ...(c.failure ? { failure: c.failure } : { value: Buffer.from(c.value ?? new Uint8Array()).toString('base64') }),
      };
      out.outbox.push({ id: scope.nextMessageId(), body });
      break;
    }
    case MessageType.SendSignalCommand: {
      const c = decodeSendSignalCommand(entry.payload);
      if (c.idx === undefined) throw new CommandRejected(501, 'named signals are not supported yet');
      const body: OutboxBody = {
        kind: 'signal',
        invocationId: c.targetInvocationId,
        signalId: c.idx,
        ...(c.failure ? { failure: c.failure } : c.value ? { value: Buffer.from(c.value).toString('base64') } : {}),
      };
      out.outbox.push({ id: scope.nextMessageId(), body });
      break;
    }
    case MessageType.InputCommand:
      throw new CommandRejected(571, 'the SDK must not send an Input command');
    case MessageType.GetPromiseCommand:
    case MessageType.PeekPromiseCommand:
    case MessageType.CompletePromiseCommand: {
      // §9.2: restate-server refuses promise commands outside a workflow.
      if (scope.target.serviceTy !== 'Workflow' || !scope.promises) {
        throw new CommandRejected(571, 'promise commands are only allowed in workflow handlers');
      }
      const r = await scope.promises.apply(scope.invocationId, entry, scope.nextMessageId);
      out.notifications.push(...r.notifications);
      out.outbox.push(...r.outbox);
      break;
    }
    case MessageType.AttachInvocationCommand:
    case MessageType.GetInvocationOutputCommand:
      await attachOrGetOutput(scope, entry, out);
      break;
    default:
      // Output, Run, eager state reads and custom entries: stored and replayed, nothing else.
      break;
  }
  return out;
}

/**
 * §9.9: both answer with the target's output once it is there. Get-output answers at once,
 * `void` while the target runs; attach waits (see attachments.ts). Only the invocation-id
 * target is supported; workflow and idempotent-request targets fail the command's promise.
 */
async function attachOrGetOutput(scope: CommandScope, entry: JournalEntry, out: CommandOutcome): Promise<void> {
  const attach = entry.type === MessageType.AttachInvocationCommand;
  const c = attach ? decodeAttachInvocationCommand(entry.payload) : decodeGetInvocationOutputCommand(entry.payload);
  const type = attach ? MessageType.AttachInvocationCompletionNotification : MessageType.GetInvocationOutputCompletionNotification;
  const answer = (result: Omit<Notification, 'completionId'>) => out.notifications.push(notification(type, { completionId: c.resultCompletionId, ...result }));
  const targetId = c.invocationId;
  if (targetId === undefined) {
    answer({ failure: { code: 501, message: 'attaching to workflow or idempotent-request targets is not supported yet' } });
    return;
  }
  try {
    parseInvocationId(targetId);
  } catch (err) {
    if (!(err instanceof IdError)) throw err;
    answer({ failure: { code: 400, message: `bad invocation id '${targetId}': ${err.message}` } });
    return;
  }
  const target = await targetOutcome(scope.store, scope.partitions, targetId);
  if (target.state === 'completed') answer(completionResult(target.completion));
  else if (!attach) answer(target.state === 'pending' ? { void: true } : { failure: NOT_FOUND });
  else out.attachWaits.push({ completionId: c.resultCompletionId, targetId });
}
