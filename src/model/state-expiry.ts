/**
 * A key's state expiry (`state_ttl`, issue 26): every commit that writes the state of a key
 * whose writer has a TTL also writes, in the same transition, the key's expiry record (when it
 * expires, and the TTL that set it) and its timer (moved to that time). The record is what the
 * expiry checks and removes (compare-and-set), so a write that lands meanwhile wins; the timer
 * only wakes it up.
 */
import type { RecordWrite, Timer } from '../store/types.js';
import { objectRecordKey, RecordKind } from './persisted.js';
import { timerOf } from './timers.js';

export interface StateExpiry {
  /** Epoch ms at which the state is cleared unless written again. */
  dueAt: number;
  /** The TTL that set `dueAt`, in ms. */
  ttl: number;
}

/** The writes that (re)start a key's clock: its record and its timer. */
export function stateExpiryWrites(
  service: string,
  key: string,
  scope: string | undefined,
  ttl: number,
  now: number,
): { record: RecordWrite; timer: Timer } {
  const lock = objectRecordKey(service, key, scope);
  const value: StateExpiry = { dueAt: now + ttl, ttl };
  return {
    record: { kind: RecordKind.stateExpiry, key: lock, value },
    timer: { ...timerOf.stateExpiry(lock), dueAt: value.dueAt },
  };
}

/** A stored record read back; undefined when it is not one. */
export function readStateExpiry(raw: unknown): StateExpiry | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { dueAt, ttl } = raw as Partial<StateExpiry>;
  return typeof dueAt === 'number' && typeof ttl === 'number' ? { dueAt, ttl } : undefined;
}
