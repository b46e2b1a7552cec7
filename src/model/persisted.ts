/**
 * What the runtime stores, as every reader of the store sees it: the persisted forms of
 * invocations, keys and limiters, the record kinds of a partition and their keys, and the one
 * place that reads them back. Every form carries a version `v`; a stored value of an older
 * version goes through the upgrade step of its kind here, so every reader only ever sees the
 * current shape. Version 0 is what redstate stored before versions existed (the same shape,
 * without `v`).
 *
 * The runtime turns these into machine snapshots and back (runtime/kernel/snapshots.ts);
 * /query, the admin API and the ingress read them here.
 */
import {
  retentionEnd,
  type Completion,
  type Failure,
  type InvocationContext,
  type Target,
} from '../../machines/invocation.js';
import type { LimiterContext } from '../../machines/limiter.js';
import type { ObjectKeyContext } from '../../machines/object-key.js';
import type { Store } from '../store/types.js';

/** The JSON form of an invocation: the machine's state value and context. */
export interface PersistedInvocation {
  v: 1;
  value: string;
  context: InvocationContext;
}

export interface PersistedObjectKey {
  v: 1;
  value: string;
  context: ObjectKeyContext;
}

/**
 * A scope's limiter is stored as this head record plus one `limiterWaiter` record per waiting
 * invocation, so a change writes what changed rather than the whole queue. `context.waiting`
 * is stored empty; `nextSeq` numbers the waiters in arrival order.
 */
export interface PersistedLimiter {
  v: 1;
  value: string;
  context: LimiterContext;
  nextSeq: number;
}

export interface PersistedWaiter {
  seq: number;
  slot: LimiterContext['waiting'][number];
}

/** A completed invocation's outcome, with the end of its retention. */
export interface CompletedInvocation {
  id: string;
  target: Target;
  completion: Completion;
  completedAt: number;
  /** When the completed invocation is purged (its retention ends): `idempotency-expires`. */
  expiresAt: number;
}

/** A workflow's durable promise (service-protocol.md §9.7): its result once completed, or who waits for it. */
export interface PromiseRecord {
  /** base64 value or failure, once completed. */
  result?: { value: string } | { failure: Failure };
  waiters: Array<{ invocationId: string; completionId: number }>;
}

/** Record kinds of a partition (store `records`). */
export const RecordKind = {
  /** One per virtual-object key or workflow id: its lock (runtime/kernel/object-keys.ts). */
  objectKey: 'object',
  /** One per durable promise of a workflow (runtime/invoker/commands/promise-records.ts). */
  promise: 'promise',
  /** Admin state writes waiting for their key's lock (runtime/services/state-mutations.ts). */
  stateMutation: 'stateMutation',
  /** A named signal delivered to its invocation, by outbox message id, until the message is removed (runtime/services/delivery.ts). */
  signalDelivery: 'signalDelivery',
  /** Attach commands waiting for their target, in the caller's partition (runtime/services/attachments.ts). */
  attachWait: 'attachWait',
  /** One per scope, in the scope's partition: its slots and paused queues (runtime/kernel/limiters.ts). */
  limiter: 'limiter',
  /** One per invocation waiting for its scope's slot, key `limiterWaiterKey`. */
  limiterWaiter: 'limiterWaiter',
  /** One per key whose state expires (state_ttl), key `objectRecordKey` (model/state-expiry.ts). */
  stateExpiry: 'stateExpiry',
  /** One per schedule, in the partition of its id (model/schedules.ts). */
  schedule: 'schedule',
} as const;

/** An Attach command that waits for its target: written with the command, removed with its answer. */
export interface AttachWait {
  callerId: string;
  completionId: number;
  targetId: string;
}

export function attachWaitKey(callerId: string, completionId: number): string {
  return `${callerId}/${completionId}`;
}

/** The record key of a virtual-object key or workflow id; a scoped one is another key than the unscoped one. */
export function objectRecordKey(service: string, key: string, scope?: string): string {
  return JSON.stringify(scope === undefined ? [service, key] : [service, key, scope]);
}

/** Back from an `objectRecordKey` to what it names; undefined for a key that is not one. */
export function parseObjectRecordKey(record: string): { service: string; key: string; scope?: string } | undefined {
  try {
    const parsed: unknown = JSON.parse(record);
    if (Array.isArray(parsed) && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') {
      return { service: parsed[0], key: parsed[1], ...(typeof parsed[2] === 'string' ? { scope: parsed[2] } : {}) };
    }
  } catch {
    // not one of ours
  }
  return undefined;
}

export function limiterWaiterKey(scope: string, invocationId: string): string {
  return JSON.stringify([scope, invocationId]);
}

/** Whether a `limiterWaiter` record key belongs to this scope. */
export function isWaiterOf(scope: string, key: string): boolean {
  return key.startsWith(`${JSON.stringify([scope]).slice(0, -1)},`);
}

class UnreadableRecord extends Error {
  constructor(what: string, raw: unknown) {
    super(`cannot read a stored ${what}: ${JSON.stringify(raw)?.slice(0, 200)}`);
    this.name = 'UnreadableRecord';
  }
}

function isVersioned(raw: unknown): raw is { v?: unknown; value: unknown; context: unknown } {
  return typeof raw === 'object' && raw !== null && 'value' in raw && 'context' in raw;
}

/**
 * A stored snapshot in its current form; throws on something that is not one. Versions 0 and 1
 * have the same shape; a later version gets its upgrade step here.
 */
function readSnapshot<C>(what: string, raw: unknown): { v: 1; value: string; context: C } {
  if (!isVersioned(raw) || typeof raw.value !== 'string') throw new UnreadableRecord(what, raw);
  if (raw.v !== undefined && raw.v !== 1) throw new UnreadableRecord(`${what} of version ${String(raw.v)}`, raw);
  return { v: 1, value: raw.value, context: raw.context as C };
}

export function readInvocation(raw: unknown): PersistedInvocation {
  return readSnapshot<InvocationContext>('invocation', raw);
}

export function readObjectKey(raw: unknown): PersistedObjectKey {
  return readSnapshot<ObjectKeyContext>('object key', raw);
}

export function readLimiter(raw: unknown): PersistedLimiter {
  const snapshot = readSnapshot<LimiterContext>('limiter', raw);
  const nextSeq = (raw as { nextSeq?: unknown }).nextSeq;
  return { ...snapshot, nextSeq: typeof nextSeq === 'number' ? nextSeq : 0 };
}

/** A scope's limiter as stored: the head record (undefined: none yet, as stored), and its waiters in arrival order. */
export async function readScopeLimiter(
  store: Store,
  partition: number,
  scope: string,
): Promise<{ head: PersistedLimiter | undefined; stored: unknown; waiters: PersistedWaiter[] }> {
  const raw = await store.getRecord(partition, RecordKind.limiter, scope);
  if (raw === undefined) return { head: undefined, stored: null, waiters: [] };
  const keys = (await store.listRecords(partition, RecordKind.limiterWaiter)).filter((k) => isWaiterOf(scope, k));
  const waiters = (await Promise.all(keys.map((k) => store.getRecord(partition, RecordKind.limiterWaiter, k)))).filter(
    (w): w is PersistedWaiter => w !== undefined,
  );
  return { head: readLimiter(raw), stored: raw, waiters: waiters.sort((a, b) => a.seq - b.seq) };
}

/** The limiter's whole context: the head's, with its waiters in arrival order. */
export function limiterContextOf(head: PersistedLimiter, waiters: readonly PersistedWaiter[]): LimiterContext {
  return { ...head.context, waiting: waiters.map((w) => w.slot) };
}

/** The result of a completed invocation, with the end of its retention; undefined while it runs. */
export function completedOf(id: string, context: InvocationContext): CompletedInvocation | undefined {
  if (!context.completion || context.completedAt === undefined) return undefined;
  return {
    id,
    target: context.target,
    completion: context.completion,
    completedAt: context.completedAt,
    expiresAt: retentionEnd(context),
  };
}

/** A workflow's `run`: it runs once per workflow id and cannot be restarted. */
export function isWorkflowRunContext(context: Pick<InvocationContext, 'target' | 'exclusive'>): boolean {
  return context.target.serviceTy === 'Workflow' && context.exclusive === true;
}
