/**
 * The invocation actors in memory: a cache of what the store holds. Any actor can be dropped
 * and rebuilt from its snapshot and journal at any time; concurrent rebuilds of one id share
 * one load, so an actor never exists twice. Actors that only wait (suspended, scheduled,
 * paused) leave memory (`retire`): such an invocation costs nothing here until
 * its notification, timer or operator comes.
 */
import type { Store } from '../../store/types.js';
import { InvocationActor, type ActorPorts } from '../kernel/invocation-actor.js';
import { partitionOfId } from '../../model/partitioning.js';
import { readInvocation } from '../../model/persisted.js';
import { ActorRetired } from '../kernel/retired.js';
import { SingleFlight } from '../kernel/single-flight.js';
import type { PersistedInvocation } from '../../model/persisted.js';
import { recordActorsInMemory } from '../../telemetry/metrics.js';

export class ActorCache {
  private readonly live = new Map<string, InvocationActor>();
  private readonly loading = new SingleFlight<InvocationActor | undefined>();

  constructor(
    private readonly store: Store,
    private readonly partitions: number,
    private readonly ports: ActorPorts,
  ) {}

  partitionOf(id: string): number {
    return partitionOfId(id, this.partitions);
  }

  /** The live actor, if one is in memory and usable. */
  peek(id: string): InvocationActor | undefined {
    const actor = this.live.get(id);
    return actor && !actor.isBroken && !actor.isRetired ? actor : undefined;
  }

  has(id: string): boolean {
    return this.live.has(id);
  }

  /** The live actor of a non-terminal invocation, rebuilt from the store when needed. */
  async get(id: string): Promise<InvocationActor | undefined> {
    const live = this.peek(id);
    if (live) return live;
    return this.loading.run(id, async () => {
      const partition = this.partitionOf(id);
      const persisted = await this.stored(id);
      if (!persisted || persisted.value === 'completed') return undefined;
      const actor = InvocationActor.restore(
        this.ports,
        partition,
        persisted,
        await this.store.readJournal(partition, id),
      );
      this.add(actor);
      return actor;
    });
  }

  /** The invocation's committed form: the live actor's, else the store's. */
  async persisted(id: string): Promise<PersistedInvocation | undefined> {
    const live = this.peek(id);
    return live ? { v: 1, value: live.status, context: live.context } : this.stored(id);
  }

  /** Reads the store, bypassing the cache. */
  async stored(id: string): Promise<PersistedInvocation | undefined> {
    const raw = await this.store.loadInvocation(this.partitionOf(id), id);
    return raw === undefined ? undefined : readInvocation(raw);
  }

  /**
   * Runs `job` on the live actor of a non-terminal invocation, in its queue, loading it when
   * needed; `found: false` when the invocation is completed or unknown. A job that reaches an
   * actor after it left memory runs on the one loaded in its place.
   */
  async with<T>(
    id: string,
    job: (actor: InvocationActor) => Promise<T>,
  ): Promise<{ found: true; value: T } | { found: false }> {
    for (;;) {
      const actor = await this.get(id);
      if (!actor) return { found: false };
      try {
        return { found: true, value: await actor.run(() => job(actor)) };
      } catch (err) {
        if (!(err instanceof ActorRetired)) throw err;
      }
    }
  }

  /** Restarts whatever the invocation's committed state asks for (after a restart or a lost commit). */
  async resume(id: string): Promise<InvocationActor | undefined> {
    const r = await this.with(id, async (actor) => {
      await actor.resume();
      return actor;
    });
    return r.found ? r.value : undefined;
  }

  /** An actor that only waits (the machine's `waiting` tag) leaves memory once the jobs before this one are done. */
  retire(actor: InvocationActor): void {
    void actor.retireIfWaiting().then(
      (left) => left && this.remove(actor),
      () => undefined,
    );
  }

  add(actor: InvocationActor): void {
    if (this.live.get(actor.id) === actor || actor.isRetired) return;
    if (!this.live.has(actor.id)) recordActorsInMemory('invocation', 1);
    this.live.set(actor.id, actor);
  }

  /** Drops this actor (not a newer one of the same id). */
  remove(actor: InvocationActor): void {
    if (this.live.get(actor.id) !== actor) return;
    this.live.delete(actor.id);
    recordActorsInMemory('invocation', -1);
  }

  /** The partition moved to another node: its actors leave memory, their attempts stopped, nothing committed. */
  dropPartition(partition: number): void {
    for (const actor of [...this.live.values()]) {
      if (actor.partition !== partition) continue;
      this.remove(actor);
      actor.leave('its partition moved to another node');
    }
  }

  values(): IterableIterator<InvocationActor> {
    return this.live.values();
  }
}
