/**
 * Between invocations and their scope's limiter (machines/limiter.ts): asking for a slot for an
 * invocation that became due (a delayed scoped send, or one that waited across a restart),
 * letting an invocation run once a committed change gave it a slot, and the operator's levers
 * on the limiters: rules changed, a virtual queue paused or resumed.
 */
import type { InvocationActor } from '../kernel/invocation-actor.js';
import { slotRecords, type Limiters } from '../kernel/limiters.js';
import type { Store } from '../../store/types.js';
import { RecordKind, readLimiter } from '../kernel/persisted.js';
import type { ActorCache } from './actors.js';
import type { RetryScheduler } from './retry.js';

export interface SlotGrantsDeps {
  readonly store: Store;
  readonly limiters: Limiters;
  readonly actors: ActorCache;
  readonly retry: RetryScheduler;
  now(): number;
}

export class SlotGrants {
  constructor(private readonly deps: SlotGrantsDeps) {}

  /** Asks for a `pending` invocation's slot (asking is idempotent); lets it run if it holds one already. */
  request(actor: InvocationActor): void {
    this.ask(actor).catch((err: unknown) => this.deps.retry.later(`invocation ${actor.id}: ask its scope for a slot`, err, () => this.resume(actor.id)));
  }

  /** A committed change gave these invocations a slot: let them go on. */
  granted(ids: string[]): void {
    for (const id of ids) {
      this.start(id).catch((err: unknown) => this.deps.retry.later(`invocation ${id}: start after it got a slot`, err, () => this.start(id)));
    }
  }

  /** The rules changed: every limiter in memory admits what now fits (every scope with waiters is in memory). */
  async rulesChanged(): Promise<void> {
    await Promise.all(this.deps.limiters.loaded().map((l) => this.deps.limiters.poke(l.partition, l.scope, { type: 'tick' })));
  }

  /**
   * Pauses or resumes a virtual queue, durably (in its scope's limiter record). Answers whether
   * the queue is known; an unknown one is left alone, as the reference answers 202 for it too.
   */
  async setPaused(partition: number, vqueue: string, paused: boolean): Promise<boolean> {
    const scope = await this.scopeOf(partition, vqueue);
    if (scope === undefined) return false;
    await this.deps.limiters.poke(partition, scope, paused ? { type: 'pauseQueue', vqueue } : { type: 'resumeQueue', vqueue });
    return true;
  }

  private async scopeOf(partition: number, vqueue: string): Promise<string | undefined> {
    const live = this.deps.limiters.loaded().find((l) => l.partition === partition && vqueue in l.context.vqueues);
    if (live) return live.scope;
    for (const scope of await this.deps.store.listRecords(partition, RecordKind.limiter)) {
      const raw = await this.deps.store.getRecord(partition, RecordKind.limiter, scope);
      if (raw !== undefined && vqueue in readLimiter(raw).context.vqueues) return scope;
    }
    return undefined;
  }

  private async ask(actor: InvocationActor): Promise<void> {
    const { scope, service, key } = actor.context.target;
    const { limitKey, vqueueId, exclusive } = actor.context;
    const lockName = exclusive ? `${service}/${key!}` : undefined;
    const holds = await this.deps.limiters.with(actor.partition, scope!, async (limiter) => {
      if (!limiter.holds(actor.id)) {
        const request = { type: 'acquire' as const, invocationId: actor.id, vqueue: { id: vqueueId!, service, ...(lockName ? { lockName } : {}) }, ...(limitKey !== undefined ? { limitKey } : {}) };
        const change = await limiter.change(request, (c) => this.deps.store.commit({ partition: actor.partition, records: slotRecords(c) }));
        this.deps.limiters.settled(actor.partition, scope!, change, actor.id);
      }
      return limiter.holds(actor.id);
    });
    if (holds) this.granted([actor.id]);
  }

  private async start(id: string): Promise<void> {
    await this.deps.actors.with(id, async (actor) => {
      if (actor.status === 'pending' && actor.context.slotHeld !== true) actor.applyStoredElsewhere({ type: 'slotGranted', now: this.deps.now() });
    });
  }

  /** Reload and ask again. */
  private async resume(id: string): Promise<void> {
    const actor = await this.deps.actors.get(id);
    if (actor?.status === 'pending' && actor.context.slotHeld !== true) await this.ask(actor);
  }
}
