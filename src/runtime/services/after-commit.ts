/**
 * What a commit's effects do once it is durable (design.md, "The invariant"); what they became
 * in the store is kernel/effects.ts's. In order: the operators' view (./observe.ts), the new
 * durable timers armed, the outbox delivered, a `pending` invocation queued for its key's lock
 * or its scope's slot, waiters answered (`respond`), whoever got the lock it released started,
 * and an invocation that now only waits let go from memory.
 */
import type { Committed, InvocationActor } from '../kernel/invocation-actor.js';
import type { Logger } from '../types.js';
import type { ActorCache } from './actors.js';
import type { Delivery } from './delivery.js';
import type { Invocations } from './invocations.js';
import type { LockGrants } from './lock-grants.js';
import { observeCommit } from './observe.js';
import type { SlotGrants } from './slot-grants.js';
import type { TimerService } from './timer-arming.js';

export interface AfterCommitDeps {
  readonly log: Logger;
  readonly timers: TimerService;
  readonly delivery: Delivery;
  readonly grants: LockGrants;
  readonly slots: SlotGrants;
  readonly invocations: Invocations;
  readonly actors: ActorCache;
  now(): number;
}

/**
 * A waiting invocation whose own timer (its start, a retry, a sleep) this commit armed to fire
 * within this long stays in memory: loading it back when the timer fires cost more than keeping
 * it (S6, 2,000 sends delayed by 2 s: the reload was 4% of the server's time).
 */
const KEEP_IF_DUE_WITHIN_MS = 5_000;

export function performCommitted(deps: AfterCommitDeps, actor: InvocationActor, done: Committed): void {
  observeCommit(deps.log, actor, done);
  deps.timers.added(actor.partition, done.timers);
  deps.delivery.deliver(actor.partition, done.outbox);
  for (const e of done.effects) {
    if (e.type === 'requestLock') deps.grants.request(actor);
    else if (e.type === 'requestSlot') deps.slots.request(actor);
    else if (e.type === 'respond') deps.invocations.completed(actor);
  }
  for (const id of done.granted) deps.grants.granted(id);
  if (actor.hasTag('waiting') && !dueSoon(done.timers, deps.now())) deps.actors.retire(actor);
}

function dueSoon(timers: Committed['timers'], now: number): boolean {
  return timers.some((t) => t.dueAt - now <= KEEP_IF_DUE_WITHIN_MS);
}
