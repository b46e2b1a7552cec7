/**
 * Between invocations and their scope's limiter (machines/limiter.ts): asking for a slot for an
 * invocation once it is stored (a new scoped invocation, a delayed one that became due, one
 * that waited across a restart), letting an invocation run once a committed change gave it a
 * slot, and the operator's levers on the limiters: rules changed, a queue paused or resumed.
 *
 * The asks that reach a scope while its limiter is busy become one change and one commit, in
 * arrival order: a scope's limiter is one record, so its commits are one after the other, and
 * one per ask would cap a busy scope at one disk flush per new invocation. An invocation that
 * was stored but had not asked yet when the process died asks again at recovery (it is
 * `pending` without a slot).
 *
 * A request from outside is checked against its scope's backlog bounds before it is stored
 * (`reserve`), counting with the waiters those admitted before it that have not asked yet: the
 * check and the count are one synchronous step, so requests that arrive together cannot all
 * slip past a bound.
 */
import type { InvocationActor } from '../kernel/invocation-actor.js';
import { slotRecords, type LimiterRequest, type Limiters } from '../kernel/limiters.js';
import type { Store } from '../../store/types.js';
import { TooManyRequests } from '../../errors.js';
import { RecordKind, readLimiter } from '../../model/persisted.js';
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
  /** Asks not yet taken up by their scope's limiter, by scope. */
  private readonly asks = new Map<string, InvocationActor[]>();
  /** Bounded requests admitted and not yet taken up by their scope's limiter, by scope: id → limit key. */
  private readonly coming = new Map<string, Map<string, string | undefined>>();

  constructor(private readonly deps: SlotGrantsDeps) {}

  /** Asks for a `pending` invocation's slot (asking is idempotent); lets it run if it holds one already. */
  request(actor: InvocationActor): void {
    const scope = actor.context.target.scope!;
    const waiting = this.asks.get(scope);
    if (waiting) {
      waiting.push(actor);
      return;
    }
    this.asks.set(scope, [actor]);
    void this.askAll(actor.partition, scope);
  }

  /**
   * Refuses a request that would overflow a backlog bound of its scope (`TooManyRequests`),
   * or counts it as coming until its limiter takes up its ask; the answer takes it back
   * when its creation failed.
   */
  async reserve(partition: number, scope: string, id: string, limitKey: string | undefined): Promise<() => void> {
    const limiter = await this.deps.limiters.get(partition, scope);
    const coming = this.coming.get(scope) ?? new Map<string, string | undefined>();
    const full = limiter.backlogFull(limitKey, [...coming.values()]);
    if (full)
      throw new TooManyRequests(
        `the backlog of the limit rule '${full.pattern}' is full (${full.backlog} waiting): try again later`,
      );
    coming.set(id, limitKey);
    this.coming.set(scope, coming);
    return () => this.arrived(scope, [id]);
  }

  private arrived(scope: string, ids: Iterable<string>): void {
    const coming = this.coming.get(scope);
    if (!coming) return;
    for (const id of ids) coming.delete(id);
    if (coming.size === 0) this.coming.delete(scope);
  }

  /** A committed change gave these invocations a slot at `at`: let them go on (they run from `at`: sys_invocation.running_at). */
  granted(ids: string[], partition: number, scope: string, at: number): void {
    for (const id of ids) {
      const start = () => this.start(id, partition, scope, at);
      start().catch((err: unknown) =>
        this.deps.retry.later(`invocation ${id}: start after it got a slot`, err, start, partition),
      );
    }
  }

  /** The rules changed: every limiter in memory admits what now fits (every scope with waiters is in memory). */
  async rulesChanged(): Promise<void> {
    await Promise.all(
      this.deps.limiters.loaded().map((l) => this.deps.limiters.poke(l.partition, l.scope, { type: 'tick' })),
    );
  }

  /**
   * Pauses or resumes a virtual queue, durably (in its scope's limiter record). Answers whether
   * the queue is known; an unknown one is left alone, as the reference answers 202 for it too.
   */
  async setPaused(partition: number, vqueue: string, paused: boolean): Promise<boolean> {
    const scope = await this.scopeOf(partition, vqueue);
    if (scope === undefined) return false;
    await this.deps.limiters.poke(
      partition,
      scope,
      paused ? { type: 'pauseQueue', vqueue } : { type: 'resumeQueue', vqueue },
    );
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

  /**
   * In the limiter's queue, takes up every ask that came meanwhile. After a failed commit, the
   * invocations are asked for again from the store (they are still `pending`).
   */
  private async askAll(partition: number, scope: string): Promise<void> {
    let actors: InvocationActor[] = [];
    try {
      await this.deps.limiters.with(partition, scope, async (limiter) => {
        actors = this.asks.get(scope) ?? [];
        this.asks.delete(scope);
        // One that ended meanwhile (killed while it waited to ask) asks for nothing.
        const asking = actors.filter((a) => a.status === 'pending' && !a.isBroken);
        const requests = asking.filter((a) => !limiter.holds(a.id)).map((a) => acquireOf(a));
        const holding = asking.filter((a) => limiter.holds(a.id)).map((a) => a.id);
        if (requests.length > 0) {
          const change = await limiter.change(requests, (c) =>
            this.deps.store.commit({ partition, records: slotRecords(c) }),
          );
          this.deps.limiters.settled(partition, scope, change);
        }
        this.granted(holding, partition, scope, this.deps.now());
        this.arrived(
          scope,
          actors.map((a) => a.id),
        );
      });
    } catch (err) {
      // The asks this job took, or (the limiter could not be had) those still waiting for it.
      if (actors.length === 0) {
        actors = this.asks.get(scope) ?? [];
        this.asks.delete(scope);
      }
      this.arrived(
        scope,
        actors.map((a) => a.id),
      );
      for (const a of actors)
        this.deps.retry.later(`invocation ${a.id}: ask its scope for a slot`, err, () => this.resume(a.id), partition);
    }
  }

  /**
   * Lets the invocation run with its slot. One that has ended meanwhile (it was killed just as
   * its ask was taken up) gives the slot back, or the scope would lose it for good.
   */
  private async start(id: string, partition: number, scope: string, at: number): Promise<void> {
    const live = await this.deps.actors.with(id, async (actor) => {
      if (actor.status === 'pending' && actor.context.slotHeld !== true)
        actor.applyStoredElsewhere({ type: 'slotGranted', now: at });
      return actor.status !== 'completed';
    });
    if (!live.found || !live.value)
      await this.deps.limiters.poke(partition, scope, { type: 'release', invocationId: id });
  }

  /** Reload and ask again. */
  private async resume(id: string): Promise<void> {
    const actor = await this.deps.actors.get(id);
    if (actor?.status === 'pending' && actor.context.slotHeld !== true) this.request(actor);
  }
}

function acquireOf(actor: InvocationActor): LimiterRequest {
  const { service, key } = actor.context.target;
  const { limitKey, vqueueId, exclusive, priority } = actor.context;
  const lockName = exclusive ? `${service}/${key!}` : undefined;
  return {
    type: 'acquire',
    invocationId: actor.id,
    vqueue: { id: vqueueId!, service, ...(lockName !== undefined ? { lockName } : {}) },
    ...(limitKey !== undefined ? { limitKey } : {}),
    ...(priority !== undefined ? { priority } : {}),
  };
}
