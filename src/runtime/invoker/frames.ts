/**
 * One batch of SDK frames → one commit (design.md data flow, step 4): the journal entries to
 * append, the machine events (End, Suspension, Error), and the writes the commands imply.
 * Reads only; the attempt commits the result.
 */
import {
  decodeError,
  decodeOutputCommand,
  decodeProposeRunCompletion,
  decodeSuspension,
  encodeNotification,
  ErrorBehavior,
  isCommand,
  isCustomEntry,
  MessageType,
  type ErrorMessage,
} from '../../protocol/messages.js';
import { REQUESTED_ACK, type Frame } from '../../protocol/framing.js';
import { ProtocolCode, RuntimeCode } from '../../errors.js';
import type { AttemptFailure, Completion, InvocationEvent } from '../../../machines/invocation.js';
import type { JournalEntry, OutboxMessage, StateOp, Timer } from '../../store/types.js';
import { CommandRejected, commandOutcome, type CommandScope } from './commands/index.js';

export interface Batch {
  entries: JournalEntry[];
  events: InvocationEvent[];
  timersAdd: Timer[];
  outboxAdd: OutboxMessage[];
  state: StateOp[];
  attachWaits: Array<{ completionId: number; targetId: string }>;
  /** Offsets in `entries` of run completions the SDK asked to be acked instead of sent back (v7, §10). */
  acks: number[];
  /** End, Suspension or Error arrived, or the SDK broke the protocol: the attempt is over. */
  ended: boolean;
  /** The attempt failed (Start field 7 counts it once the batch is stored). */
  failed: boolean;
}

export interface BatchContext {
  scope: CommandScope;
  protocolVersion: number;
  now: number;
  /** The last stored Output command: End may follow an Output of an earlier batch. */
  storedOutput(): JournalEntry | undefined;
}

export async function readBatch(frames: Frame[], ctx: BatchContext): Promise<Batch> {
  const b: Batch = {
    entries: [],
    events: [],
    timersAdd: [],
    outboxAdd: [],
    state: [],
    attachWaits: [],
    acks: [],
    ended: false,
    failed: false,
  };
  for (const frame of frames) {
    if (b.ended) break;
    if (isCommand(frame.type) || isCustomEntry(frame.type)) await readCommand(frame, ctx, b);
    else readControl(frame, ctx, b);
  }
  return b;
}

function fail(b: Batch, ctx: BatchContext, failure: Omit<AttemptFailure, 'errorCode'>): void {
  b.events.push({
    type: 'attemptFailed',
    failure: { errorCode: RuntimeCode.retryableServiceError, ...failure },
    now: ctx.now,
  });
  b.ended = true;
  b.failed = true;
}

async function readCommand(frame: Frame, ctx: BatchContext, b: Batch): Promise<void> {
  const entry = { type: frame.type, payload: frame.payload };
  if (!isCommand(frame.type)) {
    b.entries.push(entry);
    return;
  }
  try {
    const outcome = await commandOutcome({ ...ctx.scope, pendingState: b.state }, entry);
    b.entries.push(entry, ...outcome.notifications);
    b.timersAdd.push(...outcome.timersAdd);
    b.outboxAdd.push(...outcome.outbox);
    b.state.push(...outcome.state);
    b.attachWaits.push(...outcome.attachWaits);
  } catch (err) {
    if (!(err instanceof CommandRejected)) throw err;
    fail(b, ctx, { code: err.code, message: err.message });
  }
}

function readControl(frame: Frame, ctx: BatchContext, b: Batch): void {
  switch (frame.type) {
    case MessageType.ProposeRunCompletion: {
      const p = decodeProposeRunCompletion(frame.payload);
      const n = p.failure
        ? { completionId: p.resultCompletionId, failure: p.failure }
        : { completionId: p.resultCompletionId, value: p.value ?? new Uint8Array() };
      b.entries.push({ type: MessageType.RunCompletionNotification, payload: encodeNotification(n) });
      if (ctx.protocolVersion >= 7 && (frame.flags & REQUESTED_ACK) !== 0) b.acks.push(b.entries.length - 1);
      return;
    }
    case MessageType.AwaitingOn:
      return;
    case MessageType.End: {
      const completion = completionOf(b.entries, ctx);
      if (!completion)
        return fail(b, ctx, {
          code: ProtocolCode.protocolViolation,
          message: 'the SDK sent End without an Output command',
        });
      b.events.push({ type: 'complete', completion, now: ctx.now });
      b.ended = true;
      return;
    }
    case MessageType.Suspension: {
      const s = decodeSuspension(frame.payload);
      const awaiting = {
        completions: s.waitingCompletions,
        signals: s.waitingSignals,
        namedSignals: s.waitingNamedSignals,
        ...(s.awaitingOn ? { future: s.awaitingOn } : {}),
      };
      b.events.push({ type: 'suspend', awaiting, now: ctx.now });
      b.ended = true;
      return;
    }
    case MessageType.Error:
      return fail(b, ctx, failureOf(decodeError(frame.payload)));
    default:
      fail(b, ctx, {
        code: ProtocolCode.protocolViolation,
        message: `unexpected message 0x${frame.type.toString(16)} from the SDK`,
      });
  }
}

/** §12: the SDK's Error message as the machine's attempt failure. */
function failureOf(e: ErrorMessage): Omit<AttemptFailure, 'errorCode'> {
  const behavior = e.behavior === ErrorBehavior.Pause ? 'pause' : e.behavior === ErrorBehavior.Fail ? 'fail' : 'retry';
  return {
    code: e.code,
    message: e.message,
    ...(e.stacktrace ? { stacktrace: e.stacktrace } : {}),
    ...(e.relatedCommandIndex !== undefined ? { relatedCommandIndex: e.relatedCommandIndex } : {}),
    ...(e.relatedCommandName !== undefined ? { relatedCommandName: e.relatedCommandName } : {}),
    ...(e.relatedCommandType !== undefined ? { relatedCommandType: e.relatedCommandType } : {}),
    ...(e.nextRetryDelay !== undefined ? { nextRetryDelay: e.nextRetryDelay } : {}),
    behavior,
  };
}

/** The invocation's result: the last Output command of this batch, else of the journal. */
function completionOf(entries: JournalEntry[], ctx: BatchContext): Completion | undefined {
  let output: JournalEntry | undefined;
  for (let i = entries.length - 1; i >= 0 && !output; i--)
    if (entries[i]!.type === MessageType.OutputCommand) output = entries[i];
  output ??= ctx.storedOutput();
  if (!output) return undefined;
  const o = decodeOutputCommand(output.payload);
  if (o.failure) return { failure: o.failure };
  return { ok: Buffer.from(o.value ?? new Uint8Array()).toString('base64') };
}
