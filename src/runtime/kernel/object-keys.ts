/**
 * The `object-key` actors (machines/object-key.ts): one per virtual-object key or workflow id,
 * persisted as a record of the key's partition.
 *
 * Every change to a key's lock runs on the actor's queue and is committed *together with* the
 * invocation change that caused it (creation, completion), so the lock and the invocations
 * can never disagree in the store. Invocation jobs may wait for a key's queue; key jobs never
 * wait for an invocation's queue, so the two cannot deadlock.
 *
 * A commit that fails leaves the outcome unknown (it may have landed): the actor is dropped
 * and the next `get` reads the key's record again, never the stale in-memory state. Every
 * change also expects the record to hold what this actor last read or wrote (a
 * compare-and-set in the store), so the lock can only move from the holder the store names,
 * whatever an actor believes.
 *
 * The changes of a creation and of a completion may overlap: each is computed from the one
 * before while that one's commit is still on its way, so a caller joining a busy key's inbox
 * and the holder's completion go to the store together (one fsync on the embedded store, whose
 * inbox commit is `lazy`), not one after the other. A key whose actor leaves memory is read
 * again only once its changes in flight have their answers.
 */
import { objectKeyEffects, objectKeySteps, type ObjectKeyEvent } from '../../../machines/object-key.js';
import { TransitionConflict, type RecordWrite, type Store } from '../../store/types.js';
import { objectRecordKey, readObjectKey, RecordKind } from '../../model/persisted.js';
import { persistObjectKey, restoreObjectKey, type ObjectKeySnapshot } from './snapshots.js';
import { RecordActor } from './record-actor.js';
import { HandOffQueue } from '../../serial-queue.js';
import { ActorRetired } from './retired.js';
import { SingleFlight } from './single-flight.js';
import { recordActorsInMemory } from '../../telemetry/metrics.js';

export interface LockChange {
  record: RecordWrite;
  /** Invocations that got the lock by this change. */
  granted: string[];
}

export class ObjectKeyActor extends RecordActor<ObjectKeySnapshot, LockChange> {
  private readonly queue = new HandOffQueue();
  /** Left memory (kernel/retired.ts): every later job is refused. */
  private retired = false;
  /** Commits of changes handed to the store that have not answered yet. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The running job's hand-off: an overlapping change lets the next job start once it is on its way. */
  private handOff: (() => void) | undefined;

  constructor(
    readonly service: string,
    readonly key: string,
    readonly scope: string | undefined,
    snapshot: ObjectKeySnapshot,
    stored: unknown,
    private readonly forget: (actor: ObjectKeyActor, err: unknown) => void,
    /** Told after a committed change left the lock free. */
    private readonly freed: () => void = () => {},
  ) {
    super(snapshot, stored);
  }

  protected get name(): string {
    return `the lock of ${this.service}/${this.key}`;
  }

  protected lost(err: unknown): void {
    this.forget(this, err);
  }

  get holder(): string | undefined {
    return this.snapshot.context.holder;
  }

  /** Whether this id holds the lock or waits for it. */
  has(id: string): boolean {
    return this.snapshot.context.holder === id || this.snapshot.context.inbox.includes(id);
  }

  get isFree(): boolean {
    return this.snapshot.value === 'free';
  }

  get isRetired(): boolean {
    return this.retired;
  }

  /** Once every change handed to the store has its answer, whichever it was. */
  get settled(): Promise<unknown> {
    return Promise.allSettled(this.inFlight);
  }

  /**
   * Runs `job` after every earlier job of this key; refused with `ActorRetired` once it left
   * memory. With `overlap`, the job may start while earlier changes are still being committed
   * (its own change is computed from theirs and committed behind them) and the next job may
   * start once its change is on its way; without, it starts once they all answered, so what it
   * reads of the lock is stored.
   */
  run<T>(job: () => Promise<T>, overlap = false): Promise<T> {
    return this.queue.run(async (handOff) => {
      if (this.retired) throw new ActorRetired(`${this.service}/${this.key}`);
      if (overlap) this.handOff = handOff;
      else await this.settled;
      try {
        return await job();
      } finally {
        if (this.handOff === handOff) this.handOff = undefined;
      }
    });
  }

  /** Leaves memory if the key is free once the jobs before this one and their commits are done; resolves with whether it left. */
  retireIfFree(): Promise<boolean> {
    return this.run(async () => {
      if (!this.isFree) return false;
      this.retired = true;
      return true;
    });
  }

  /**
   * Computes a lock change; `commit` must store `change.record` with the caller's own writes.
   * The in-memory state moves once that commit succeeded, or, in a job run with `overlap`, once
   * `commit` handed it to the store (the next job may start then). Call inside `run`.
   */
  async change(event: ObjectKeyEvent, commit: (change: LockChange) => Promise<void>): Promise<LockChange> {
    this.checkFresh();
    const [next, actions] = objectKeySteps.next(this.snapshot, event);
    const change: LockChange = {
      record: {
        kind: RecordKind.objectKey,
        key: objectRecordKey(this.service, this.key, this.scope),
        value: persistObjectKey(next),
        expect: this.stored,
      },
      granted: objectKeyEffects(actions).map((e) => e.params.invocationId),
    };
    const handOff = this.handOff;
    this.handOff = undefined;
    const done = handOff
      ? await this.changeAhead(next, change, commit, handOff)
      : await this.apply(next, change, commit);
    if (this.isFree) this.freed();
    return done;
  }

  /**
   * A change computed from changes not stored yet: if one of them fails, the store refuses this
   * one too (its record expects theirs) and nothing of it is written, so its job runs again on
   * the lock read back from the store.
   */
  private async changeAhead(
    next: ObjectKeySnapshot,
    change: LockChange,
    commit: (change: LockChange) => Promise<void>,
    handOff: () => void,
  ): Promise<LockChange> {
    const ahead = this.inFlight.size > 0;
    // In the set before the next job starts: `handOff` resolves a promise, so that job runs a
    // microtask later at the earliest.
    const committed = this.applyAhead(next, change, commit, handOff);
    this.inFlight.add(committed);
    try {
      return await committed;
    } catch (err) {
      if (ahead && err instanceof TransitionConflict) throw new ActorRetired(`${this.service}/${this.key}`);
      throw err;
    } finally {
      this.inFlight.delete(committed);
    }
  }
}

/** Free keys kept in memory beyond this many are let go, least recently used first. */
const FREE_KEYS_KEPT = 10_000;

/**
 * The live lock actors, loaded from the store on first use. Keys whose lock is free are only
 * a cache: past `FREE_KEYS_KEPT` the least recently used of them leave memory.
 */
export class ObjectLocks {
  /** In order of last use: a Map iterates in insertion order, and a use re-inserts. */
  private readonly actors = new Map<string, ObjectKeyActor>();
  private readonly loading = new SingleFlight<ObjectKeyActor>();
  /**
   * Keys whose actor left memory with changes still on their way to the store: the key is read
   * again only once they have their answers, so it is read as they left it.
   */
  private readonly draining = new Map<string, Promise<unknown>>();
  /** The partition of each key in memory (`forgetPartition`). */
  private readonly partitionOf = new Map<string, number>();

  /**
   * @param lost told of the partition of a change whose commit failed, its outcome unknown
   * @param freed told after a committed change left a key's lock free (an expiry may wait for it)
   */
  constructor(
    private readonly store: Store,
    private readonly lost: (partition: number, err: unknown) => void = () => {},
    private readonly freed: (
      partition: number,
      service: string,
      key: string,
      scope: string | undefined,
    ) => void = () => {},
  ) {}

  /**
   * Runs `job` on the key's lock actor, in its queue; a job that reaches an actor after it left
   * memory runs on the one loaded in its place.
   */
  async with<T>(
    partition: number,
    service: string,
    key: string,
    job: (lock: ObjectKeyActor) => Promise<T>,
    scope?: string,
    overlap = false,
  ): Promise<T> {
    for (;;) {
      const lock = await this.get(partition, service, key, scope);
      try {
        return await lock.run(() => job(lock), overlap);
      } catch (err) {
        if (!(err instanceof ActorRetired)) throw err;
      }
    }
  }

  /** The key's lock actor as it is now (to read its holder); changes go through `with`. */
  async get(partition: number, service: string, key: string, scope?: string): Promise<ObjectKeyActor> {
    const id = objectRecordKey(service, key, scope);
    const live = this.actors.get(id);
    if (live && !live.isRetired) {
      this.actors.delete(id);
      this.actors.set(id, live);
      return live;
    }
    return this.loading.run(id, async () => {
      await this.draining.get(id);
      const stored = await this.store.getRecord(partition, RecordKind.objectKey, id);
      const snapshot =
        stored !== undefined ? restoreObjectKey(readObjectKey(stored)) : objectKeySteps.initial({ service, key })[0];
      const actor = new ObjectKeyActor(
        service,
        key,
        scope,
        snapshot,
        stored ?? null,
        (a, err) => {
          this.drop(id, a);
          this.lost(partition, err);
        },
        () => this.freed(partition, service, key, scope),
      );
      if (!this.actors.has(id)) recordActorsInMemory('object_key', 1);
      this.actors.set(id, actor);
      this.partitionOf.set(id, partition);
      this.letGoOfFreeKeys();
      return actor;
    });
  }

  /** The partition moved to another node: its locks are read from the store again if it comes back. */
  forgetPartition(partition: number): void {
    for (const [id, actor] of [...this.actors]) if (this.partitionOf.get(id) === partition) this.drop(id, actor);
  }

  private drop(id: string, actor: ObjectKeyActor): void {
    if (this.actors.get(id) !== actor) return;
    const drained: Promise<unknown> = actor.settled.then(() => {
      if (this.draining.get(id) === drained) this.draining.delete(id);
    });
    this.draining.set(id, drained);
    this.actors.delete(id);
    this.partitionOf.delete(id);
    recordActorsInMemory('object_key', -1);
  }

  private letGoOfFreeKeys(): void {
    let excess = this.actors.size - FREE_KEYS_KEPT;
    for (const [id, actor] of this.actors) {
      if (excess <= 0) return;
      if (!actor.isFree) continue;
      excess--;
      void actor.retireIfFree().then(
        (left) => left && this.drop(id, actor),
        () => undefined,
      );
    }
  }
}
