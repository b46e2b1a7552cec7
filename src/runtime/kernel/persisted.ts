/**
 * The persisted forms of the actors and the records of a partition, and the one place that
 * reads them back. Every form carries a version `v`; a stored value of an older version goes
 * through the upgrade function of its kind, so the rest of the runtime only ever sees the
 * current shape. Version 0 is what redstate stored before versions existed (the same shape,
 * without `v`).
 */
import type { SnapshotFrom } from 'xstate';
import { invocationMachine, retentionEnd, type InvocationContext } from '../../../machines/invocation.js';
import { objectKeyMachine, type ObjectKeyContext } from '../../../machines/object-key.js';
import type { CompletedInvocation, PersistedInvocation } from '../types.js';

export type InvocationSnapshot = SnapshotFrom<typeof invocationMachine>;
export type ObjectKeySnapshot = SnapshotFrom<typeof objectKeyMachine>;

export interface PersistedObjectKey {
  v: 1;
  value: string;
  context: ObjectKeyContext;
}

/** Record kinds of a partition (store `records`). */
export const RecordKind = {
  /** One per virtual-object key or workflow id: its lock (kernel/object-keys.ts). */
  objectKey: 'object',
  /** One per durable promise of a workflow (invoker/commands/promises.ts). */
  promise: 'promise',
  /** Admin state writes waiting for their key's lock (services/state-mutations.ts). */
  stateMutation: 'stateMutation',
} as const;

/** The record key of a virtual-object key or workflow id. */
export function objectRecordKey(service: string, key: string): string {
  return JSON.stringify([service, key]);
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

/** A stored invocation in its current form; throws on something that is not one. */
export function readInvocation(raw: unknown): PersistedInvocation {
  if (!isVersioned(raw) || typeof raw.value !== 'string') throw new UnreadableRecord('invocation', raw);
  switch (raw.v) {
    case undefined:
    case 1:
      return { v: 1, value: raw.value, context: raw.context as InvocationContext };
    default:
      throw new UnreadableRecord(`invocation of version ${String(raw.v)}`, raw);
  }
}

export function readObjectKey(raw: unknown): PersistedObjectKey {
  if (!isVersioned(raw) || typeof raw.value !== 'string') throw new UnreadableRecord('object key', raw);
  switch (raw.v) {
    case undefined:
    case 1:
      return { v: 1, value: raw.value, context: raw.context as ObjectKeyContext };
    default:
      throw new UnreadableRecord(`object key of version ${String(raw.v)}`, raw);
  }
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
