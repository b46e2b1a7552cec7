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
}

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
  if (actor.hasTag('waiting')) deps.actors.retire(actor);
}
