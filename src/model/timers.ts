/**
 * Durable timers and what each is for. A timer's key says its purpose, so the store needs no
 * payload and a timer that fires twice (a crash between firing and removal) is recognised by
 * its key; its owner (a field, store/types.ts `TimerRef`) is the invocation it belongs to. A
 * key's state expiry and a schedule's next fire belong to no invocation, and have no owner.
 */
import type { TimerRef } from '../store/types.js';

export type TimerPurpose =
  | { kind: 'start'; invocationId: string }
  | { kind: 'retry'; invocationId: string }
  /** A completed invocation's retention is over: purge it. */
  | { kind: 'expire'; invocationId: string }
  | { kind: 'sleep'; invocationId: string; completionId: number }
  /** A key's state is due to expire (model/state-expiry.ts); `lock` is the key's `objectRecordKey`. */
  | { kind: 'stateExpiry'; lock: string }
  /** A schedule's next fire (model/schedules.ts). */
  | { kind: 'schedule'; scheduleId: string };

const SEPARATOR = '|';

/** The timer of each purpose, keyed and owned by its invocation. */
export const timerOf = {
  start: (invocationId: string): TimerRef => ({ key: `start${SEPARATOR}${invocationId}`, owner: invocationId }),
  retry: (invocationId: string): TimerRef => ({ key: `retry${SEPARATOR}${invocationId}`, owner: invocationId }),
  expire: (invocationId: string): TimerRef => ({ key: `expire${SEPARATOR}${invocationId}`, owner: invocationId }),
  sleep: (invocationId: string, completionId: number): TimerRef => ({
    key: `sleep${SEPARATOR}${invocationId}${SEPARATOR}${completionId}`,
    owner: invocationId,
  }),
  stateExpiry: (lock: string): TimerRef => ({ key: `stateExpiry${SEPARATOR}${lock}` }),
  schedule: (scheduleId: string): TimerRef => ({ key: `schedule${SEPARATOR}${scheduleId}` }),
};

/** What a stored timer is for, read back from its key; undefined for a key of no known purpose. */
export function purposeOf(key: string): TimerPurpose | undefined {
  // An object key may hold the separator: the rest of the timer's key is the lock's.
  if (key.startsWith(`stateExpiry${SEPARATOR}`))
    return { kind: 'stateExpiry', lock: key.slice('stateExpiry'.length + 1) };
  const [kind, invocationId, extra] = key.split(SEPARATOR);
  if (!invocationId) return undefined;
  if (kind === 'schedule') return { kind, scheduleId: invocationId };
  if (kind === 'start' || kind === 'retry' || kind === 'expire') return { kind, invocationId };
  if (kind === 'sleep' && extra !== undefined) return { kind, invocationId, completionId: Number(extra) };
  return undefined;
}

/** The reference that removes a timer the store handed out (its owner comes from its purpose). */
export function timerRefOf(key: string): TimerRef {
  const purpose = purposeOf(key);
  const owner = purpose && 'invocationId' in purpose ? purpose.invocationId : undefined;
  return owner === undefined ? { key } : { key, owner };
}
