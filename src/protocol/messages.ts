/**
 * Every message of service protocol v5–v7 (service-protocol.md §6, §7), as TS interfaces with
 * camelCase proto field names, plus one `decodeX`/`encodeX` pair per message.
 *
 * Conventions (§6, §17):
 * - A proto field of type `Value { content }` is exposed as the `Uint8Array` content; the codec
 *   wraps and unwraps it. Raw `bytes` fields (ProposeRunCompletion.value, Call/OneWayCall.parameter,
 *   state_map values) are plain `Uint8Array` too; each codec below says which is which.
 * - proto3 fields without presence are always set after decoding (0, '', false, empty).
 * - `optional` fields and oneof members are `?` properties whose presence is preserved, also
 *   when empty: an empty Value decodes to `new Uint8Array(0)`, a Void to `true`.
 * - uint64: `randomSeed` is a bigint; times and durations are numbers (epoch ms / ms).
 */
import { MessageSchema, defineSchema, type SchemaFields } from './protobuf.js';

export const MessageType = {
  Start: 0x0000,
  Suspension: 0x0001,
  Error: 0x0002,
  End: 0x0003,
  CommandAck: 0x0004,
  ProposeRunCompletion: 0x0005,
  AwaitingOn: 0x0006,
  ProposeRunCompletionAck: 0x0007,
  InputCommand: 0x0400,
  OutputCommand: 0x0401,
  GetLazyStateCommand: 0x0402,
  SetStateCommand: 0x0403,
  ClearStateCommand: 0x0404,
  ClearAllStateCommand: 0x0405,
  GetLazyStateKeysCommand: 0x0406,
  GetEagerStateCommand: 0x0407,
  GetEagerStateKeysCommand: 0x0408,
  GetPromiseCommand: 0x0409,
  PeekPromiseCommand: 0x040a,
  CompletePromiseCommand: 0x040b,
  SleepCommand: 0x040c,
  CallCommand: 0x040d,
  OneWayCallCommand: 0x040e,
  SendSignalCommand: 0x0410,
  RunCommand: 0x0411,
  AttachInvocationCommand: 0x0412,
  GetInvocationOutputCommand: 0x0413,
  CompleteAwakeableCommand: 0x0414,
  GetLazyStateCompletionNotification: 0x8002,
  GetLazyStateKeysCompletionNotification: 0x8006,
  GetPromiseCompletionNotification: 0x8009,
  PeekPromiseCompletionNotification: 0x800a,
  CompletePromiseCompletionNotification: 0x800b,
  SleepCompletionNotification: 0x800c,
  CallCompletionNotification: 0x800d,
  CallInvocationIdCompletionNotification: 0x800e,
  RunCompletionNotification: 0x8011,
  AttachInvocationCompletionNotification: 0x8012,
  GetInvocationOutputCompletionNotification: 0x8013,
  SignalNotification: 0xfbff,
} as const;

export type MessageName = keyof typeof MessageType;

const NAMES = new Map<number, MessageName>(Object.entries(MessageType).map(([name, id]) => [id, name as MessageName]));

const hex4 = (type: number): string => `0x${type.toString(16).padStart(4, '0')}`;

/** Type ranges (§5). 0xFBFF (SignalNotification) sits just below the custom-entry range. */
export const isCommand = (type: number): boolean => type >= 0x0400 && type <= 0x7fff;
export const isNotification = (type: number): boolean => type >= 0x8000 && type <= 0xfbff;
export const isCustomEntry = (type: number): boolean => type >= 0xfc00 && type <= 0xffff;

export function messageName(type: number): string {
  return NAMES.get(type) ?? (isCustomEntry(type) ? `CustomEntry(${hex4(type)})` : `Unknown(${hex4(type)})`);
}

// --- Codecs ---------------------------------------------------------------------------------

/** Method syntax on purpose: a `Codec<Start>` may then be handled as a `Codec<unknown>`. */
export interface Codec<T> {
  decode(payload: Uint8Array): T;
  encode(message: T): Uint8Array;
}

const CODECS = new Map<number, Codec<unknown>>();

/** Registers the wire layout of message `type`; returns its `[decode, encode]` pair. */
function codec<T>(
  type: number,
  spec: SchemaFields<T> | MessageSchema<T>,
): [(payload: Uint8Array) => T, (message: T) => Uint8Array] {
  const schema = spec instanceof MessageSchema ? spec : defineSchema<T>(spec);
  CODECS.set(type, schema);
  return [(p) => schema.decode(p), (m) => schema.encode(m)];
}

/**
 * The codec for a message type id, for generic tooling (journal inspection, tests); undefined
 * for custom entries and unknown ids, which are stored and replayed opaquely (§5).
 */
export function codecFor(type: number): Codec<unknown> | undefined {
  return CODECS.get(type);
}

const T = MessageType;

// --- Shared nested types --------------------------------------------------------------------

export interface Header {
  key: string;
  value: string;
}
export interface Failure {
  code: number;
  message: string;
  /** v6+. Left out when empty. */
  metadata?: { key: string; value: string }[];
}
export interface StateEntry {
  key: Uint8Array;
  /** Raw bytes, no Value wrapper (§7); empty means an empty value, not a missing one. */
  value: Uint8Array;
}
/** v7 await tree (§6.1, §11). */
export interface Future {
  waitingCompletions: number[];
  waitingSignals: number[];
  waitingNamedSignals: string[];
  nestedFutures: Future[];
  combinatorType: number;
}
/** Future.combinatorType: race, allSettled, any, all; Unknown counts as FirstCompleted. */
export const CombinatorType = {
  Unknown: 0,
  FirstCompleted: 1,
  AllCompleted: 2,
  FirstSucceededOrAllFailed: 3,
  AllSucceededOrFirstFailed: 4,
} as const;
export interface IdempotentRequestTarget {
  serviceName: string;
  serviceKey?: string;
  handlerName: string;
  idempotencyKey: string;
  scope?: string;
}
export interface WorkflowTarget {
  workflowName: string;
  workflowKey: string;
  scope?: string;
}

const HeaderSchema = defineSchema<Header>({ key: [1, 'string'], value: [2, 'string'] });
const FailureSchema = defineSchema<Failure>({
  code: [1, 'uint32'],
  message: [2, 'string'],
  metadata: [3, HeaderSchema, 'repeatedOptional'],
});
const FutureSchema: MessageSchema<Future> = defineSchema<Future>({
  waitingCompletions: [1, 'uint32', 'repeated'],
  waitingSignals: [2, 'uint32', 'repeated'],
  waitingNamedSignals: [3, 'string', 'repeated'],
  nestedFutures: [4, () => FutureSchema, 'repeated'],
  combinatorType: [5, 'uint32'],
});
// Scope is #5 / #3 as in restate's current proto (§6.2). One sdk-shared-core snapshot numbers
// it #7, so decoding accepts that too.
const IdempotentRequestTargetSchema = defineSchema<IdempotentRequestTarget>({
  serviceName: [1, 'string'],
  serviceKey: [2, 'string', 'optional'],
  handlerName: [3, 'string'],
  idempotencyKey: [4, 'string'],
  scope: [5, 'string', 'optional', [7]],
});
const WorkflowTargetSchema = defineSchema<WorkflowTarget>({
  workflowName: [1, 'string'],
  workflowKey: [2, 'string'],
  scope: [3, 'string', 'optional', [7]],
});

// --- Control messages (§6.1, §7) ------------------------------------------------------------

export interface Start {
  /** 24-byte binary invocation id (§14). */
  id: Uint8Array;
  debugId: string;
  /** Commands + notifications that follow, Input included (§7, §13). */
  knownEntries: number;
  stateMap: StateEntry[];
  partialState: boolean;
  key: string;
  retryCountSinceLastStoredEntry: number;
  durationSinceLastStoredEntry: number;
  randomSeed: bigint;
  scope?: string;
  limitKey?: string;
  idempotencyKey?: string;
}
export const [decodeStart, encodeStart] = codec<Start>(T.Start, {
  id: [1, 'bytes'],
  debugId: [2, 'string'],
  knownEntries: [3, 'uint32'],
  stateMap: [4, defineSchema<StateEntry>({ key: [1, 'bytes'], value: [2, 'bytes'] }), 'repeated'],
  partialState: [5, 'bool'],
  key: [6, 'string'],
  retryCountSinceLastStoredEntry: [7, 'uint32'],
  durationSinceLastStoredEntry: [8, 'uint64'],
  randomSeed: [9, 'uint64big'],
  scope: [10, 'string', 'optional'],
  limitKey: [11, 'string', 'optional'],
  idempotencyKey: [12, 'string', 'optional'],
});

/** v5/v6 use fields 1–3; v7 uses only `awaitingOn` (§6.1, §11). */
export interface Suspension {
  waitingCompletions: number[];
  waitingSignals: number[];
  waitingNamedSignals: string[];
  awaitingOn?: Future;
}
export const [decodeSuspension, encodeSuspension] = codec<Suspension>(T.Suspension, {
  waitingCompletions: [1, 'uint32', 'repeated'],
  waitingSignals: [2, 'uint32', 'repeated'],
  waitingNamedSignals: [3, 'string', 'repeated'],
  awaitingOn: [4, FutureSchema, 'optional'],
});

export interface ErrorMessage {
  code: number;
  message: string;
  stacktrace: string;
  relatedCommandIndex?: number;
  relatedCommandName?: string;
  /** A message type id, e.g. 0x0411 for Run. */
  relatedCommandType?: number;
  /** ms; overrides the delay of the next retry only (§12). */
  nextRetryDelay?: number;
  /** v7, see ErrorBehavior; absent means retry (§12). */
  behavior?: number;
}
export const ErrorBehavior = { Retry: 0, Pause: 1, Fail: 2 } as const;
export const [decodeError, encodeError] = codec<ErrorMessage>(T.Error, {
  code: [1, 'uint32'],
  message: [2, 'string'],
  stacktrace: [3, 'string'],
  relatedCommandIndex: [4, 'uint32', 'optional'],
  relatedCommandName: [5, 'string', 'optional'],
  relatedCommandType: [6, 'uint32', 'optional'],
  nextRetryDelay: [8, 'uint64', 'optional'],
  behavior: [9, 'uint32', 'optional'],
});

export type End = Record<string, never>;
export const [decodeEnd, encodeEnd] = codec<End>(T.End, {});

export interface CommandAck {
  commandIndex: number;
}
export const [decodeCommandAck, encodeCommandAck] = codec<CommandAck>(T.CommandAck, { commandIndex: [1, 'uint32'] });

export interface ProposeRunCompletion {
  resultCompletionId: number;
  /** Raw bytes, not a Value (§6.1, §17). */
  value?: Uint8Array;
  failure?: Failure;
}
export const [decodeProposeRunCompletion, encodeProposeRunCompletion] = codec<ProposeRunCompletion>(
  T.ProposeRunCompletion,
  { resultCompletionId: [1, 'uint32'], value: [14, 'bytes', 'optional'], failure: [15, FailureSchema, 'optional'] },
);

export interface AwaitingOn {
  awaitingOn?: Future;
  executingSideEffects: boolean;
}
export const [decodeAwaitingOn, encodeAwaitingOn] = codec<AwaitingOn>(T.AwaitingOn, {
  awaitingOn: [1, FutureSchema, 'optional'],
  executingSideEffects: [2, 'bool'],
});

export interface ProposeRunCompletionAck {
  completionId: number;
}
export const [decodeProposeRunCompletionAck, encodeProposeRunCompletionAck] = codec<ProposeRunCompletionAck>(
  T.ProposeRunCompletionAck,
  { completionId: [1, 'uint32'] },
);

// --- Commands (§6.2). Every command carries an entry name, #12, for observability. ----------

interface Named {
  name: string;
}
const name = [12, 'string'] as const;
const resultCompletionId = [11, 'uint32'] as const;

export interface InputCommand extends Named {
  headers: Header[];
  value: Uint8Array;
}
export const [decodeInputCommand, encodeInputCommand] = codec<InputCommand>(T.InputCommand, {
  headers: [1, HeaderSchema, 'repeated'],
  value: [14, 'wrappedBytes', 'always'],
  name,
});

export interface OutputCommand extends Named {
  value?: Uint8Array;
  failure?: Failure;
}
export const [decodeOutputCommand, encodeOutputCommand] = codec<OutputCommand>(T.OutputCommand, {
  value: [14, 'wrappedBytes', 'optional'],
  failure: [15, FailureSchema, 'optional'],
  name,
});

export interface GetLazyStateCommand extends Named {
  key: Uint8Array;
  resultCompletionId: number;
}
export const [decodeGetLazyStateCommand, encodeGetLazyStateCommand] = codec<GetLazyStateCommand>(
  T.GetLazyStateCommand,
  { key: [1, 'bytes'], resultCompletionId, name },
);

export interface SetStateCommand extends Named {
  key: Uint8Array;
  value: Uint8Array;
}
export const [decodeSetStateCommand, encodeSetStateCommand] = codec<SetStateCommand>(T.SetStateCommand, {
  key: [1, 'bytes'],
  value: [3, 'wrappedBytes', 'always'],
  name,
});

export interface ClearStateCommand extends Named {
  key: Uint8Array;
}
export const [decodeClearStateCommand, encodeClearStateCommand] = codec<ClearStateCommand>(T.ClearStateCommand, {
  key: [1, 'bytes'],
  name,
});

export type ClearAllStateCommand = Named;
export const [decodeClearAllStateCommand, encodeClearAllStateCommand] = codec<ClearAllStateCommand>(
  T.ClearAllStateCommand,
  { name },
);

export interface GetLazyStateKeysCommand extends Named {
  resultCompletionId: number;
}
export const [decodeGetLazyStateKeysCommand, encodeGetLazyStateKeysCommand] = codec<GetLazyStateKeysCommand>(
  T.GetLazyStateKeysCommand,
  { resultCompletionId, name },
);

/** The SDK resolves eager reads itself and journals the result (§9.2). */
export interface GetEagerStateCommand extends Named {
  key: Uint8Array;
  void?: true;
  value?: Uint8Array;
}
export const [decodeGetEagerStateCommand, encodeGetEagerStateCommand] = codec<GetEagerStateCommand>(
  T.GetEagerStateCommand,
  { key: [1, 'bytes'], void: [13, 'empty', 'optional'], value: [14, 'wrappedBytes', 'optional'], name },
);

export interface GetEagerStateKeysCommand extends Named {
  /** StateKeys.keys */
  value: Uint8Array[];
}
export const [decodeGetEagerStateKeysCommand, encodeGetEagerStateKeysCommand] = codec<GetEagerStateKeysCommand>(
  T.GetEagerStateKeysCommand,
  { value: [14, 'wrappedBytesList', 'always'], name },
);

/** Also the shape of PeekPromiseCommand. */
export interface GetPromiseCommand extends Named {
  key: string;
  resultCompletionId: number;
}
export type PeekPromiseCommand = GetPromiseCommand;
const promiseSchema = defineSchema<GetPromiseCommand>({ key: [1, 'string'], resultCompletionId, name });
export const [decodeGetPromiseCommand, encodeGetPromiseCommand] = codec(T.GetPromiseCommand, promiseSchema);
export const [decodePeekPromiseCommand, encodePeekPromiseCommand] = codec(T.PeekPromiseCommand, promiseSchema);

export interface CompletePromiseCommand extends Named {
  key: string;
  completionValue?: Uint8Array;
  completionFailure?: Failure;
  resultCompletionId: number;
}
export const [decodeCompletePromiseCommand, encodeCompletePromiseCommand] = codec<CompletePromiseCommand>(
  T.CompletePromiseCommand,
  {
    key: [1, 'string'],
    completionValue: [2, 'wrappedBytes', 'optional'],
    completionFailure: [3, FailureSchema, 'optional'],
    resultCompletionId,
    name,
  },
);

export interface SleepCommand extends Named {
  /** Absolute epoch ms chosen by the SDK; never recomputed on replay (§17). */
  wakeUpTime: number;
  resultCompletionId: number;
}
export const [decodeSleepCommand, encodeSleepCommand] = codec<SleepCommand>(T.SleepCommand, {
  wakeUpTime: [1, 'uint64'],
  resultCompletionId,
  name,
});

interface CallTarget extends Named {
  serviceName: string;
  handlerName: string;
  /** Raw bytes, not a Value (§6.2). */
  parameter: Uint8Array;
  headers: Header[];
  key: string;
  idempotencyKey?: string;
  scope?: string;
  limitKey?: string;
  /** Allocated before resultCompletionId (§8). */
  invocationIdNotificationIdx: number;
}

export interface CallCommand extends CallTarget {
  resultCompletionId: number;
}
export const [decodeCallCommand, encodeCallCommand] = codec<CallCommand>(T.CallCommand, {
  serviceName: [1, 'string'],
  handlerName: [2, 'string'],
  parameter: [3, 'bytes'],
  headers: [4, HeaderSchema, 'repeated'],
  key: [5, 'string'],
  idempotencyKey: [6, 'string', 'optional'],
  scope: [7, 'string', 'optional'],
  limitKey: [8, 'string', 'optional'],
  invocationIdNotificationIdx: [10, 'uint32'],
  resultCompletionId,
  name,
});

export interface OneWayCallCommand extends CallTarget {
  /** Epoch ms; 0 or in the past means now. */
  invokeTime: number;
}
export const [decodeOneWayCallCommand, encodeOneWayCallCommand] = codec<OneWayCallCommand>(T.OneWayCallCommand, {
  serviceName: [1, 'string'],
  handlerName: [2, 'string'],
  parameter: [3, 'bytes'],
  invokeTime: [4, 'uint64'],
  headers: [5, HeaderSchema, 'repeated'],
  key: [6, 'string'],
  idempotencyKey: [7, 'string', 'optional'],
  scope: [8, 'string', 'optional'],
  limitKey: [9, 'string', 'optional'],
  invocationIdNotificationIdx: [10, 'uint32'],
  name,
});

export interface SendSignalCommand {
  targetInvocationId: string;
  idx?: number;
  /** Signal name (#3); the entry name is `entryName` (#12). */
  name?: string;
  void?: true;
  value?: Uint8Array;
  failure?: Failure;
  entryName: string;
}
export const [decodeSendSignalCommand, encodeSendSignalCommand] = codec<SendSignalCommand>(T.SendSignalCommand, {
  targetInvocationId: [1, 'string'],
  idx: [2, 'uint32', 'optional'],
  name: [3, 'string', 'optional'],
  void: [4, 'empty', 'optional'],
  value: [5, 'wrappedBytes', 'optional'],
  failure: [6, FailureSchema, 'optional'],
  entryName: [12, 'string'],
});

export interface RunCommand extends Named {
  resultCompletionId: number;
}
export const [decodeRunCommand, encodeRunCommand] = codec<RunCommand>(T.RunCommand, { resultCompletionId, name });

/** Also the shape of GetInvocationOutputCommand; exactly one target is set. */
export interface AttachInvocationCommand extends Named {
  invocationId?: string;
  idempotentRequestTarget?: IdempotentRequestTarget;
  workflowTarget?: WorkflowTarget;
  resultCompletionId: number;
}
export type GetInvocationOutputCommand = AttachInvocationCommand;
const attachSchema = defineSchema<AttachInvocationCommand>({
  invocationId: [1, 'string', 'optional'],
  idempotentRequestTarget: [3, IdempotentRequestTargetSchema, 'optional'],
  workflowTarget: [4, WorkflowTargetSchema, 'optional'],
  resultCompletionId,
  name,
});
export const [decodeAttachInvocationCommand, encodeAttachInvocationCommand] = codec(
  T.AttachInvocationCommand,
  attachSchema,
);
export const [decodeGetInvocationOutputCommand, encodeGetInvocationOutputCommand] = codec(
  T.GetInvocationOutputCommand,
  attachSchema,
);

export interface CompleteAwakeableCommand extends Named {
  awakeableId: string;
  value?: Uint8Array;
  failure?: Failure;
}
export const [decodeCompleteAwakeableCommand, encodeCompleteAwakeableCommand] = codec<CompleteAwakeableCommand>(
  T.CompleteAwakeableCommand,
  { awakeableId: [1, 'string'], value: [2, 'wrappedBytes', 'optional'], failure: [3, FailureSchema, 'optional'], name },
);

// --- Notifications (§6.3): one shared layout; each type allows a subset of results. ---------

export interface Notification {
  completionId?: number;
  /** `idx` in SignalNotification: 1 = CANCEL, awakeables from 17 (§8). */
  signalId?: number;
  signalName?: string;
  void?: true;
  value?: Uint8Array;
  failure?: Failure;
  /** String form `inv_…` (CallInvocationIdCompletion). */
  invocationId?: string;
  stateKeys?: Uint8Array[];
}
export const [decodeNotification, encodeNotification] = codec<Notification>(T.SignalNotification, {
  completionId: [1, 'uint32', 'optional'],
  signalId: [2, 'uint32', 'optional'],
  signalName: [3, 'string', 'optional'],
  void: [4, 'empty', 'optional'],
  value: [5, 'wrappedBytes', 'optional'],
  failure: [6, FailureSchema, 'optional'],
  invocationId: [16, 'string', 'optional'],
  stateKeys: [17, 'wrappedBytesList', 'optional'],
});
const notificationCodec = CODECS.get(T.SignalNotification)!;
for (const id of Object.values(T)) if (isNotification(id)) CODECS.set(id, notificationCodec);
