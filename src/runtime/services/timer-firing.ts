/**
 * What a due durable timer does (model/timers.ts says what each is for). The timer is
 * removed in the commit that performs its effect, so it fires at most once per committed
 * effect, and again after a crash if its effect was not committed.
 */
import { encodeNotification, MessageType } from '../../protocol/messages.js';
import type { Store, Timer, TimerRef } from '../../store/types.js';
import type { InvocationActor } from '../kernel/invocation-actor.js';
import { purposeOf, timerRefOf, type TimerPurpose } from '../../model/timers.js';
import type { ActorCache } from './actors.js';

export interface TimerFiringDeps {
  readonly store: Store;
  readonly actors: ActorCache;
  /** A key's state is due to expire (./state-expiry.ts). */
  expireState(partition: number, lock: string): Promise<void>;
  /** A schedule's fire time has come (./schedules.ts). */
  fireSchedule(partition: number, scheduleId: string): Promise<void>;
  now(): number;
}

export async function fireTimer(deps: TimerFiringDeps, partition: number, timer: Timer): Promise<void> {
  const purpose = purposeOf(timer.key);
  const remove = { timersRemove: [timerRefOf(timer.key)] };
  if (purpose?.kind === 'expire') {
    // Retention is over: the invocation, its journal and its id are gone (reference §2.6 "purged").
    await deps.store.commit({ partition, deleteInvocations: [purpose.invocationId], ...remove });
    return;
  }
  if (purpose?.kind === 'stateExpiry') return deps.expireState(partition, purpose.lock);
  if (purpose?.kind === 'schedule') return deps.fireSchedule(partition, purpose.scheduleId);
  const fired = purpose
    ? await deps.actors.with(purpose.invocationId, (actor) => fireOn(actor, purpose, remove, deps.now()))
    : { found: false };
  if (!fired.found) await deps.store.commit({ partition, ...remove });
}

/** A sleep's completion, or the start / retry an invocation waits for; the timer goes in the same commit. */
function fireOn(
  actor: InvocationActor,
  purpose: Exclude<TimerPurpose, { kind: 'expire' | 'stateExpiry' | 'schedule' }>,
  remove: { timersRemove: TimerRef[] },
  now: number,
): Promise<void> {
  if (purpose.kind === 'sleep') {
    if (actor.journal.completions.has(purpose.completionId)) return actor.commit({ write: remove });
    const n = encodeNotification({ completionId: purpose.completionId, void: true });
    return actor.commit({ entries: [{ type: MessageType.SleepCompletionNotification, payload: n }], write: remove });
  }
  if (!actor.hasTag(purpose.kind === 'start' ? 'startTimer' : 'retryTimer')) return actor.commit({ write: remove });
  return actor.commit({ events: [{ type: 'timerDue', now }], write: remove });
}
