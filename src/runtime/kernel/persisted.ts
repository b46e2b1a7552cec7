/**
 * The persisted forms of the actors and the records of a partition, and the one place that
 * reads them back. Every form carries a version `v`; a stored value of an older version goes
 * through the upgrade function of its kind, so the rest of the runtime only ever sees the
 * current shape. Version 0 is what redstate stored before versions existed (the same shape,
 * without `v`).
 */
import type { SnapshotFrom } from 'xstate';
import { invocationMachine, retentionEnd, type InvocationContext } from '../../../machines/invocation.js';
import { limiterMachine, type LimiterContext } from '../../../machines/limiter.js';
import { objectKeyMachine, type ObjectKeyContext } from '../../../machines/object-key.js';
import type { CompletedInvocation, PersistedInvocation } from '../types.js';

export type InvocationSnapshot = SnapshotFrom<typeof invocationMachine>;
export type ObjectKeySnapshot = SnapshotFrom<typeof objectKeyMachine>;
export type LimiterSnapshot = SnapshotFrom<typeof limiterMachine>;

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

/** Record kinds of a partition (store `records`). */
export const RecordKind = {
  /** One per virtual-object key or workflow id: its lock (kernel/object-keys.ts). */
  objectKey: 'object',
  /** One per durable promise of a workflow (invoker/commands/promises.ts). */
  promise: 'promise',
  /** Admin state writes waiting for their key's lock (services/state-mutations.ts). */
  stateMutation: 'stateMutation',
  /** A named signal delivered to its invocation, by outbox message id, until the message is removed (services/delivery.ts). */
  signalDelivery: 'signalDelivery',
  /** Attach commands waiting for their target, in the caller's partition (services/attachments.ts). */
  attachWait: 'attachWait',
  /** One per scope, in the scope's partition: its slots and paused queues (kernel/limiters.ts). */
  limiter: 'limiter',
  /** One per invocation waiting for its scope's slot, key `limiterWaiterKey` (kernel/limiters.ts). */
  limiterWaiter: 'limiterWaiter',
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

export function limiterWaiterKey(scope: string, invocationId: string): string {
  return JSON.stringify([scope, invocationId]);
}

/** Whether a `limiterWaiter` record key belongs to this scope. */
export function isWaiterOf(scope: string, key: string): boolean {
  return key.startsWith(`${JSON.stringify([scope]).slice(0, -1)},`);
}

export function readLimiter(raw: unknown): PersistedLimiter {
  const snapshot = readSnapshot<LimiterContext>('limiter', raw);
  const nextSeq = (raw as { nextSeq?: unknown }).nextSeq;
  return { ...snapshot, nextSeq: typeof nextSeq === 'number' ? nextSeq : 0 };
}

export function persistLimiter(snapshot: LimiterSnapshot, nextSeq: number): PersistedLimiter {
  return { v: 1, value: String(snapshot.value), context: { ...snapshot.context, waiting: [] }, nextSeq };
}

/** The head record and the scope's waiter records, the waiters in arrival order. */
export function restoreLimiter(p: PersistedLimiter, waiters: PersistedWaiter[]): LimiterSnapshot {
  const waiting = [...waiters].sort((a, b) => a.seq - b.seq).map((w) => w.slot);
  return limiterMachine.resolveState({ value: p.value, context: { ...p.context, waiting } });
}

export function persistInvocation(snapshot: InvocationSnapshot): PersistedInvocation {
  return { v: 1, value: String(snapshot.value), context: snapshot.context };
}

export function persistObjectKey(snapshot: ObjectKeySnapshot): PersistedObjectKey {
  return { v: 1, value: String(snapshot.value), context: snapshot.context };
}

export function restoreInvocation(p: PersistedInvocation): InvocationSnapshot {
  return invocationMachine.resolveState({ value: p.value, context: p.context });
}

export function restoreObjectKey(p: PersistedObjectKey): ObjectKeySnapshot {
  return objectKeyMachine.resolveState({ value: p.value, context: p.context });
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
