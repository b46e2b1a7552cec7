/**
 * Machine snapshots to and from their persisted forms (src/model/persisted.ts holds the forms
 * and reads them back from the store): the runtime's side of what it stores.
 */
import type { SnapshotFrom } from 'xstate';
import { invocationMachine } from '../../../machines/invocation.js';
import { limiterMachine } from '../../../machines/limiter.js';
import { objectKeyMachine } from '../../../machines/object-key.js';
import {
  limiterContextOf,
  type PersistedInvocation,
  type PersistedLimiter,
  type PersistedObjectKey,
  type PersistedWaiter,
} from '../../model/persisted.js';

export type InvocationSnapshot = SnapshotFrom<typeof invocationMachine>;
export type ObjectKeySnapshot = SnapshotFrom<typeof objectKeyMachine>;
export type LimiterSnapshot = SnapshotFrom<typeof limiterMachine>;

export function persistLimiter(snapshot: LimiterSnapshot, nextSeq: number): PersistedLimiter {
  return { v: 1, value: String(snapshot.value), context: { ...snapshot.context, waiting: [] }, nextSeq };
}

/** The head record and the scope's waiter records (in arrival order). */
export function restoreLimiter(p: PersistedLimiter, waiters: readonly PersistedWaiter[]): LimiterSnapshot {
  return limiterMachine.resolveState({ value: p.value, context: limiterContextOf(p, waiters) });
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
