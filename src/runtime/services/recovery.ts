/**
 * Start-up recovery (design.md, "Supervisor and timers"): re-drive every outbox (so callees
 * that exist only as messages are known before anything asks for them), rehydrate the
 * invocations whose committed state says they should be doing something (an attempt lost with
 * the previous process, a lock to queue for, a suspension whose awaited notification already
 * arrived), arm the earliest durable timer of each partition, and renew what lived only in
 * memory: admin state mutations holding their lock, attaches waiting for their target.
 * Suspended and backing-off invocations stay passive until their notification or timer comes.
 */
import type { Store } from '../../store/types.js';
import type { ActorCache } from './actors.js';
import type { Attachments } from './attachments.js';
import type { Delivery } from './delivery.js';
import type { RetryScheduler } from './retry.js';
import type { StateMutations } from './state-mutations.js';
import type { TimerService } from './timer-arming.js';

export interface RecoveryDeps {
  readonly store: Store;
  readonly partitions: number;
  readonly actors: ActorCache;
  readonly delivery: Delivery;
  readonly timers: TimerService;
  readonly mutations: StateMutations;
  readonly attachments: Attachments;
  readonly retry: RetryScheduler;
}

export interface Recovered {
  resumed: number;
  redelivered: number;
  mutations: number;
  attaches: number;
}

export async function recover(deps: RecoveryDeps): Promise<Recovered> {
  const r: Recovered = { resumed: 0, redelivered: 0, mutations: 0, attaches: 0 };
  for (let p = 0; p < deps.partitions; p++) {
    const messages = await deps.store.outbox(p);
    r.redelivered += messages.length;
    deps.delivery.deliver(p, messages);
  }
  for (let p = 0; p < deps.partitions; p++) {
    for (const id of await deps.store.activeInvocations(p)) {
      const resume = async () => {
        const actor = await deps.actors.resume(id);
        if (!actor) return;
        r.resumed++;
        r.attaches += deps.attachments.recover(actor.journal, id);
      };
      await resume().catch((err: unknown) => deps.retry.later(`invocation ${id}: resume`, err, resume));
    }
    await deps.timers.arm(p);
  }
  r.mutations = await deps.mutations.recover();
  return r;
}
