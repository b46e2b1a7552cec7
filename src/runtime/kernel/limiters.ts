/**
 * The `limiter` actors (machines/limiter.ts): one per scope, persisted as a record of the
 * scope's partition, which is also the partition of every invocation of the scope
 * (model/ids.ts). So a slot is given and taken back in the same commit as the invocation
 * change that causes it (creation, completion), and the store never holds a slot without
 * its invocation, or a completed invocation still holding one.
 *
 * Like the key locks (kernel/object-keys.ts): changes run on the actor's queue and are
 * committed as kernel/record-actor.ts says; an actor whose commit failed is dropped and read
 * again. Limiter jobs may wait for a key's queue (a scoped exclusive
 * invocation takes both), never for an invocation's, so the actors cannot deadlock.
 * Limiters stay in memory: there is one per scope in use.
 */
import {
  backlogFull,
  limiterEffects,
  limiterSteps,
  type FlowRule,
  type LimiterContext,
  type LimiterEvent,
} from '../../../machines/limiter.js';
import type { RecordWrite, Store } from '../../store/types.js';
import { limiterWaiterKey, readScopeLimiter, RecordKind, type PersistedWaiter } from '../../model/persisted.js';
import { persistLimiter, restoreLimiter, type LimiterSnapshot } from './snapshots.js';
import { RecordActor } from './record-actor.js';
import { PriorityQueue } from '../../serial-queue.js';
import { SingleFlight } from './single-flight.js';
import { ActorRetired } from './retired.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as callers give it: the limiter adds the rules in force and the time. */
export type LimiterRequest = DistributiveOmit<LimiterEvent, 'rules' | 'now'>;

export interface SlotChange {
  /** The head record (compare-and-set); `waiters` adds and removes the waiter records. */
  record: RecordWrite;
  waiters: RecordWrite[];
  /** Invocations that got a slot by this change, and when (the change's time). */
  granted: string[];
  at: number;
  /** When a rate rule's next token is due, if someone waits for it. */
  wakeAt?: number;
}

export interface LimitersDeps {
  readonly store: Store;
  /** The enabled rules that may apply to this scope. */
  rules(scope: string): FlowRule[];
  now(): number;
  /** A committed change gave slots in this scope, at `at`. */
  granted(ids: string[], partition: number, scope: string, at: number): void;
  /** Told of the partition of a change whose commit failed, its outcome unknown. */
  lost(partition: number, err: unknown): void;
}

export class LimiterActor extends RecordActor<LimiterSnapshot, SlotChange> {
  private readonly queue = new PriorityQueue();

  constructor(
    readonly scope: string,
    readonly partition: number,
    snapshot: LimiterSnapshot,
    stored: unknown,
    private nextSeq: number,
    private readonly deps: LimitersDeps,
    private readonly forget: (actor: LimiterActor, err: unknown) => void,
  ) {
    super(snapshot, stored);
  }

  protected get name(): string {
    return `the limiter of scope ${this.scope}`;
  }

  protected lost(err: unknown): void {
    this.forget(this, err);
  }

  get context(): LimiterContext {
    return this.snapshot.context;
  }

  /** Whether this id holds a slot. */
  holds(id: string): boolean {
    return this.snapshot.context.running.some((s) => s.invocationId === id);
  }

  /** The rule whose backlog a new waiter with `limitKey` would overflow, under the rules in force (machines/limiter.ts `backlogFull`). */
  backlogFull(limitKey: string | undefined, coming: ReadonlyArray<string | undefined>): FlowRule | undefined {
    return backlogFull({ ...this.snapshot.context, rules: this.deps.rules(this.scope) }, limitKey, coming);
  }

  /** Runs `job` after the one running; an `urgent` one before the ordinary ones still waiting. */
  run<T>(job: () => Promise<T>, urgent = false): Promise<T> {
    return this.queue.run(job, urgent);
  }

  /**
   * Computes a change of one or more events (several asks for a slot become one commit);
   * `commit` must store the change's records with the caller's own writes. The in-memory
   * state moves only once that commit succeeded. Call inside `run`.
   */
  async change(
    requests: LimiterRequest | LimiterRequest[],
    commit: (change: SlotChange) => Promise<void>,
  ): Promise<SlotChange> {
    this.checkFresh();
    const rules = this.deps.rules(this.scope);
    const now = this.deps.now();
    let next = this.snapshot;
    const effects: ReturnType<typeof limiterEffects> = [];
    for (const request of Array.isArray(requests) ? requests : [requests]) {
      const [after, actions] = limiterSteps.next(next, { ...request, rules, now } as LimiterEvent);
      next = after;
      effects.push(...limiterEffects(actions));
    }
    const wake = effects.flatMap((e) => (e.type === 'wakeAt' ? [e.params.dueAt] : []));
    const before = new Set(this.snapshot.context.waiting.map((w) => w.invocationId));
    const after = new Set(next.context.waiting.map((w) => w.invocationId));
    let seq = this.nextSeq;
    const waiters: RecordWrite[] = [
      ...next.context.waiting
        .filter((w) => !before.has(w.invocationId))
        .map((slot): RecordWrite => ({
          kind: RecordKind.limiterWaiter,
          key: limiterWaiterKey(this.scope, slot.invocationId),
          value: { seq: seq++, slot } satisfies PersistedWaiter,
        })),
      ...[...before]
        .filter((id) => !after.has(id))
        .map((id): RecordWrite => ({
          kind: RecordKind.limiterWaiter,
          key: limiterWaiterKey(this.scope, id),
          value: null,
        })),
    ];
    const change: SlotChange = {
      record: { kind: RecordKind.limiter, key: this.scope, value: persistLimiter(next, seq), expect: this.stored },
      waiters,
      granted: effects.flatMap((e) => (e.type === 'grant' ? [e.params.invocationId] : [])),
      at: now,
      ...(wake.length > 0 ? { wakeAt: Math.min(...wake) } : {}),
    };
    const done = await this.apply(next, change, commit);
    this.nextSeq = seq;
    return done;
  }
}

/** The records a change writes: the head and the waiters that came or went. */
export const slotRecords = (c: SlotChange): RecordWrite[] => [c.record, ...c.waiters];

/** A scope's limiter as stored (a fresh one when there is none): its snapshot, the head record as stored, the next waiter number. */
async function loadLimiter(
  store: Store,
  partition: number,
  scope: string,
): Promise<{ snapshot: LimiterSnapshot; stored: unknown; nextSeq: number }> {
  const { head, stored, waiters } = await readScopeLimiter(store, partition, scope);
  if (head === undefined) return { snapshot: limiterSteps.initial({ scope })[0], stored: null, nextSeq: 0 };
  return { snapshot: restoreLimiter(head, waiters), stored, nextSeq: head.nextSeq };
}

/** The live limiters, loaded from the store on first use, and the wake-ups of their rate rules. */
export class Limiters {
  private readonly actors = new Map<string, LimiterActor>();
  private readonly loading = new SingleFlight<LimiterActor>();
  private readonly wakeups = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private stopped = false;

  constructor(private readonly deps: LimitersDeps) {}

  /** Runs `job` on the scope's limiter, in its queue (`urgent`: before the ordinary jobs still waiting). */
  async with<T>(
    partition: number,
    scope: string,
    job: (limiter: LimiterActor) => Promise<T>,
    urgent = false,
  ): Promise<T> {
    for (;;) {
      const limiter = await this.get(partition, scope);
      try {
        return await limiter.run(() => job(limiter), urgent);
      } catch (err) {
        // A change queued behind one whose commit failed: run it on the limiter read again.
        if (!(err instanceof ActorRetired)) throw err;
      }
    }
  }

  async get(partition: number, scope: string): Promise<LimiterActor> {
    const live = this.actors.get(scope);
    if (live) return live;
    return this.loading.run(scope, async () => {
      const { snapshot, stored, nextSeq } = await loadLimiter(this.deps.store, partition, scope);
      const actor = new LimiterActor(scope, partition, snapshot, stored, nextSeq, this.deps, (a, err) => {
        if (this.actors.get(scope) === a) this.actors.delete(scope);
        this.deps.lost(partition, err);
      });
      this.actors.set(scope, actor);
      return actor;
    });
  }

  /** The limiters in memory (every scope with a waiter is, once recovery asked for its slots). */
  loaded(): LimiterActor[] {
    return [...this.actors.values()];
  }

  /**
   * A change of the limiter alone (a tick, rules changed, a queue paused or resumed): committed
   * as the record's own transition; whoever got a slot is told.
   */
  async poke(partition: number, scope: string, request: LimiterRequest): Promise<void> {
    const change = await this.with(partition, scope, (l) =>
      l.change(request, (c) => this.deps.store.commit({ partition, records: slotRecords(c) })),
    );
    this.settled(partition, scope, change);
  }

  /** After any committed change: whoever got a slot is told, and the next token's wake-up is armed. */
  settled(partition: number, scope: string, change: SlotChange): void {
    if (change.granted.length > 0) this.deps.granted(change.granted, partition, scope, change.at);
    if (change.wakeAt === undefined || this.stopped) return;
    const armed = this.wakeups.get(scope);
    if (armed && armed.at <= change.wakeAt) return;
    if (armed) clearTimeout(armed.timer);
    const timer = setTimeout(
      () => {
        this.wakeups.delete(scope);
        this.poke(partition, scope, { type: 'tick' }).then(
          () => undefined,
          (err: unknown) => this.deps.lost(partition, err),
        );
      },
      Math.max(0, change.wakeAt - this.deps.now()),
    );
    timer.unref();
    this.wakeups.set(scope, { at: change.wakeAt, timer });
  }

  /** The partition moved to another node: its limiters are read from the store again if it comes back. */
  forgetPartition(partition: number): void {
    for (const [scope, actor] of [...this.actors]) {
      if (actor.partition !== partition) continue;
      this.actors.delete(scope);
      clearTimeout(this.wakeups.get(scope)?.timer);
      this.wakeups.delete(scope);
    }
  }

  stop(): void {
    this.stopped = true;
    for (const { timer } of this.wakeups.values()) clearTimeout(timer);
    this.wakeups.clear();
  }
}
