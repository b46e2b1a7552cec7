/**
 * Between invocations and their keys' locks: queueing an invocation that became due for its
 * key's lock (a delayed exclusive call, or one that waited across a restart), and letting the
 * holder of a granted lock run. Grants to admin state mutations go to them.
 */
import type { InvocationActor } from '../kernel/invocation-actor.js';
import type { ObjectLocks } from '../kernel/object-keys.js';
import type { Store } from '../../store/types.js';
import type { ActorCache } from './actors.js';
import type { RetryScheduler } from './retry.js';

export interface LockGrantsDeps {
  readonly store: Store;
  readonly locks: ObjectLocks;
  readonly actors: ActorCache;
  readonly retry: RetryScheduler;
  now(): number;
  /** Whether a lock holder id is an admin state mutation, and applying it when it got the lock. */
  readonly mutations: { owns(id: string): boolean; granted(id: string): void };
}

export class LockGrants {
  constructor(private readonly deps: LockGrantsDeps) {}

  /** Queues a `pending` invocation for its key's lock (acquiring is idempotent); runs it if it holds the lock already. */
  request(actor: InvocationActor): void {
    this.queue(actor).catch((err: unknown) =>
      this.deps.retry.later(
        `invocation ${actor.id}: queue for its key`,
        err,
        () => this.resume(actor.id),
        actor.partition,
      ),
    );
  }

  /** The key's lock passed to this id in a committed change: let it run. */
  granted(id: string): void {
    if (this.deps.mutations.owns(id)) return this.deps.mutations.granted(id);
    // Work of the id's partition: dropped with it when the partition leaves this node, so that
    // no copy loaded here afterwards runs an attempt beside the new owner's.
    this.start(id).catch((err: unknown) =>
      this.deps.retry.later(
        `invocation ${id}: start after its lock was granted`,
        err,
        () => this.start(id),
        this.deps.actors.partitionOf(id),
      ),
    );
  }

  private async queue(actor: InvocationActor): Promise<void> {
    const { service, key, scope } = actor.context.target;
    const holds = await this.deps.locks.with(
      actor.partition,
      service,
      key!,
      async (lock) => {
        if (!lock.has(actor.id)) {
          await lock.change({ type: 'acquire', invocationId: actor.id }, (change) =>
            this.deps.store.commit({ partition: actor.partition, records: [change.record] }),
          );
        }
        return lock.holder === actor.id;
      },
      scope,
    );
    if (holds) this.granted(actor.id);
  }

  private async start(id: string): Promise<void> {
    await this.deps.actors.with(id, async (actor) => {
      if (actor.status === 'pending') actor.applyStoredElsewhere({ type: 'lockGranted', now: this.deps.now() });
    });
  }

  /** Reload and queue again. */
  private async resume(id: string): Promise<void> {
    const actor = await this.deps.actors.get(id);
    if (actor?.status === 'pending') await this.queue(actor);
  }
}
