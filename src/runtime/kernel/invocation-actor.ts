/**
 * The live actor of one invocation: its machine snapshot, its journal, its current attempt.
 *
 * Everything that changes an invocation runs as a job on its queue, one at a time, and ends
 * in one `commit`: machine events → next snapshot + effects, journal appends and the writes
 * that go with them, all in ONE store transition (kernel/effects.ts); only then are the effects
 * performed (design.md, "The invariant"). If a commit fails its outcome is unknown: the
 * in-memory actor is thrown away and rebuilt from the store, which holds whichever state
 * really landed.
 */
import {
  invocationEffects,
  invocationSteps,
  type InvocationContext,
  type InvocationEffect,
  type InvocationEvent,
  type InvocationInput,
  type InvocationState,
  type InvocationTag,
} from '../../../machines/invocation.js';
import type { EffectiveHandler } from '../../registry/types.js';
import type { JournalEntry, OutboxMessage, Store, Timer, Transition } from '../../store/types.js';
import type { PersistedInvocation } from '../../model/persisted.js';
import { isSatisfied } from './awaiting.js';
import { JournalView } from './journal.js';
import { slotRecords, type Limiters } from './limiters.js';
import type { ObjectLocks } from './object-keys.js';
import { restoreInvocation, type InvocationSnapshot } from './snapshots.js';
import { transitionOf, type ExtraWrites } from './effects.js';
import { ActorRetired } from './retired.js';
import { SerialQueue } from '../../serial-queue.js';
import { historyEntries, type SteppedEvent } from './transition-history.js';

export interface Step {
  events?: InvocationEvent[];
  entries?: JournalEntry[];
  write?: ExtraWrites;
  /** Delete the invocation in this commit rather than store it (kernel/effects.ts `forget`). */
  forget?: boolean;
}

/** A running attempt as the actor sees it (invoker/attempt.ts). */
export interface AttemptHandle {
  /** The commit that starts it is durable: write Start and replay the journal. */
  start(): void;
  /** Send the notifications stored since the last flush. */
  flush(): void;
  /** The invocation left `running`: release the stream. */
  close(): void;
  abort(reason: string): void;
}

/** What a commit asked of the world outside the actor, once it is durable. */
export interface Committed {
  /** The machine state before the commit (undefined: the commit created the invocation) and after it. */
  from: InvocationState | undefined;
  to: InvocationState;
  effects: InvocationEffect[];
  timers: Timer[];
  outbox: OutboxMessage[];
  /** Invocations (or state mutations) that got the key's lock this invocation released. */
  granted: string[];
}

/** What an actor needs from the runtime around it; the runtime (runtime.ts) provides it. */
export interface ActorPorts {
  readonly store: Store;
  readonly locks: ObjectLocks;
  readonly limiters: Limiters;
  now(): number;
  /** A new attempt whose stream opens at once, while the commit that starts it is stored. */
  newAttempt(actor: InvocationActor, context: InvocationContext): AttemptHandle;
  /** Arm the timers, deliver the messages, queue for the lock, answer waiters, let grantees run. */
  committed(actor: InvocationActor, done: Committed): void;
  /** Queue a `pending` invocation for its key's lock (again, after a restart: acquiring is idempotent). */
  requestLock(actor: InvocationActor): void;
  /** The same for its scope's slot. */
  requestSlot(actor: InvocationActor): void;
  /** A commit failed and its outcome is unknown: the actor is dropped, to be read again from the store. */
  lost(actor: InvocationActor, err: unknown): void;
}

interface Advanced {
  snapshot: InvocationSnapshot;
  effects: InvocationEffect[];
  changed: boolean;
  /** Each event stepped, with the snapshot it led to: the commit's history entries. */
  steps: SteppedEvent[];
}

export class InvocationActor {
  attempt: AttemptHandle | undefined;
  /** The handler it was admitted with (services/admission.ts); undefined once reloaded from the store. */
  handler: EffectiveHandler | undefined;
  private readonly queue = new SerialQueue();
  private broken = false;
  /** Left memory (kernel/retired.ts): every later job is refused. */
  private retired = false;
  /** Steps taken in memory only (see `applyStoredElsewhere`), from `from`; the next commit stores them. */
  private unstored: { from: InvocationSnapshot; steps: SteppedEvent[] } | undefined;
  /** Whether the invocation is in the store at all (false until its creating commit lands). */
  private stored: boolean;
  /** Failed attempts since the journal last grew (Start field 7; kept in memory, best effort). */
  failuresSinceGrowth = 0;
  lastGrowthAt: number;

  private constructor(
    readonly ports: ActorPorts,
    readonly id: string,
    readonly partition: number,
    private snapshot: InvocationSnapshot,
    readonly journal: JournalView,
    stored: boolean,
  ) {
    this.lastGrowthAt = snapshot.context.modifiedAt;
    this.stored = stored;
  }

  static restore(
    ports: ActorPorts,
    partition: number,
    persisted: PersistedInvocation,
    entries: JournalEntry[],
  ): InvocationActor {
    return new InvocationActor(
      ports,
      persisted.context.id,
      partition,
      restoreInvocation(persisted),
      new JournalView(entries),
      true,
    );
  }

  /**
   * Creates and commits a new invocation with its first journal entries (Input), then starts
   * it. `handler`: the one it was admitted with, which its attempts use while it is current.
   * `made`: told of the actor before its creating commit is handed to the store (its jobs queue
   * behind that commit).
   */
  static async create(
    ports: ActorPorts,
    partition: number,
    input: InvocationInput,
    entries: JournalEntry[],
    extra: ExtraWrites = {},
    handler?: EffectiveHandler,
    made?: (actor: InvocationActor) => void,
  ): Promise<InvocationActor> {
    const [snapshot, actions] = invocationSteps.initial(input);
    const actor = new InvocationActor(ports, input.id, partition, snapshot, new JournalView(), false);
    actor.handler = handler;
    made?.(actor);
    const init: SteppedEvent = { event: { type: 'xstate.init', now: input.now }, snapshot };
    await actor.run(() =>
      actor.store(
        { snapshot, effects: invocationEffects(actions), changed: true, steps: [init] },
        { entries, write: extra },
      ),
    );
    return actor;
  }

  get status(): InvocationState {
    return this.snapshot.value;
  }

  /** What the machine says of its current state (machines/invocation.ts `InvocationTag`). */
  hasTag(tag: InvocationTag): boolean {
    return this.snapshot.hasTag(tag);
  }

  get context(): InvocationContext {
    return this.snapshot.context;
  }

  get isBroken(): boolean {
    return this.broken;
  }

  get isRetired(): boolean {
    return this.retired;
  }

  /**
   * Runs `job` after every earlier job of this invocation; refused with `ActorRetired` once it
   * left memory, or once an earlier job's commit failed (the actor must be read again): a job
   * queued behind that commit then runs on the actor loaded in its place (`ActorCache.with`).
   */
  run<T>(job: () => Promise<T>): Promise<T> {
    return this.queue.run(() => {
      if (this.retired || this.broken) throw new ActorRetired(this.id);
      return job();
    });
  }

  /**
   * Leaves memory if it waits for a notification, a timer or an operator (suspended,
   * scheduled, paused) with no attempt: the store has all of it, and the next job
   * loads it again. Resolves with whether it left.
   */
  retireIfWaiting(): Promise<boolean> {
    return this.run(async () => {
      if (!this.hasTag('waiting') || this.attempt || this.unstored !== undefined) return false;
      this.retired = true;
      return true;
    });
  }

  /**
   * Its partition left this node (or is being recovered afresh): the actor is dead from now on.
   * Every later job and commit is refused, even one already queued (an attempt's failure, a
   * lingering write), so nothing of it can be stored beside the actor that replaces it.
   */
  leave(reason: string): void {
    this.retired = true;
    this.attempt?.abort(reason);
  }

  /** Applies events and appends entries in one commit, then performs the effects. Call inside `run`. */
  async commit(step: Step): Promise<void> {
    await this.store(this.advance(this.snapshot, step.events ?? []), step);
  }

  /**
   * Applies an event whose fact is already durable in another record (a lock grant, stored in
   * the key's record by the commit that released it), so it needs no commit of its own: the
   * effects follow at once and the snapshot is stored with the invocation's next commit. After
   * a crash in between, `resume` derives the same event from that record again.
   * Call inside `run`.
   */
  applyStoredElsewhere(event: InvocationEvent): void {
    const { snapshot, effects, steps } = this.advance(this.snapshot, [event]);
    this.unstored ??= { from: this.snapshot, steps: [] };
    this.unstored.steps.push(...steps);
    this.snapshot = snapshot;
    if (effects.some((e) => e.type === 'startAttempt'))
      this.startAttempt(this.ports.newAttempt(this, snapshot.context));
    if (effects.some((e) => e.type === 'requestLock')) this.ports.requestLock(this);
  }

  /** Redoes what the committed state asks for, after a rehydration. Call inside `run`. */
  async resume(): Promise<void> {
    if (this.status === 'running' && !this.attempt) this.startAttempt(this.ports.newAttempt(this, this.context));
    else if (this.status === 'pending' && this.context.gated === true && this.context.slotHeld !== true)
      this.ports.requestSlot(this);
    else if (this.status === 'pending') this.ports.requestLock(this);
    else if (this.status === 'suspended' && this.context.awaiting && isSatisfied(this.context.awaiting, this.journal)) {
      await this.commit({ events: [{ type: 'wake', now: this.ports.now() }] });
    }
  }

  /** The attempt failed (stream broke, timeout, bad response) unless it already ended. */
  attemptFailed(attempt: AttemptHandle, failure: { code: number; message: string }): Promise<void> {
    return this.run(async () => {
      if (this.attempt !== attempt || this.status !== 'running') return;
      this.failuresSinceGrowth++;
      await this.commit({ events: [{ type: 'attemptFailed', failure, now: this.ports.now() }] });
    });
  }

  private advance(from: InvocationSnapshot, events: InvocationEvent[]): Advanced {
    let snapshot = from;
    const effects: InvocationEffect[] = [];
    const steps: SteppedEvent[] = [];
    for (const event of events) {
      const [next, actions] = invocationSteps.next(snapshot, event);
      snapshot = next;
      effects.push(...invocationEffects(actions));
      steps.push({ event, snapshot });
    }
    return { snapshot, effects, changed: events.length > 0, steps };
  }

  /** A suspension whose awaited notification is in the journal now wakes up in the same commit. */
  private wakeIfSatisfied(a: Advanced): Advanced {
    const { awaiting } = a.snapshot.context;
    if (a.snapshot.value !== 'suspended' || !awaiting || !isSatisfied(awaiting, this.journal)) return a;
    const woken = this.advance(a.snapshot, [{ type: 'wake', now: this.ports.now() }]);
    return {
      snapshot: woken.snapshot,
      effects: [...a.effects, ...woken.effects],
      changed: true,
      steps: [...a.steps, ...woken.steps],
    };
  }

  private async store(advanced: Advanced, step: Step): Promise<void> {
    if (this.broken) throw new Error(`invocation ${this.id} must be reloaded`);
    if (this.retired) throw new ActorRetired(this.id);
    const appendedAt = this.ports.now();
    const entries = (step.entries ?? []).map((e) => ({ ...e, appendedAt }));
    const journalAt = this.journal.length;
    // The journal view grows first so that the wake check sees the new notifications; a
    // failed commit discards this whole actor anyway.
    for (const e of entries) this.journal.push(e);
    const { snapshot, effects, changed, steps } = this.wakeIfSatisfied(advanced);
    // What the store holds now: steps taken in memory since (`applyStoredElsewhere`) are stored with this commit.
    const storedSnapshot = this.stored ? (this.unstored?.from ?? this.snapshot) : undefined;
    // In the same commit as the steps it records (design.md, "Visualisation").
    const history = historyEntries(storedSnapshot, [...(this.unstored?.steps ?? []), ...steps]);
    const tx: Transition = {
      ...transitionOf({
        id: this.id,
        partition: this.partition,
        snapshot,
        snapshotChanged: changed || this.unstored !== undefined,
        effects,
        entries,
        journalAt,
        ...(step.write ? { extra: step.write } : {}),
        ...(step.forget ? { forget: true } : {}),
      }),
      // A forgotten invocation leaves no history behind either.
      ...(history.length > 0 && !step.forget ? { history: [{ id: this.id, entries: history }] } : {}),
    };
    const from = storedSnapshot?.value;
    const next = effects.some((e) => e.type === 'startAttempt')
      ? this.ports.newAttempt(this, snapshot.context)
      : undefined;
    let granted: string[];
    try {
      granted = await this.persist(tx, snapshot.context, effects);
    } catch (err) {
      this.broken = true;
      this.attempt?.abort('store commit failed');
      next?.abort('store commit failed');
      this.ports.lost(this, err);
      throw err;
    }
    this.snapshot = snapshot;
    this.unstored = undefined;
    this.stored = true;
    if (entries.length > 0) {
      this.failuresSinceGrowth = 0;
      this.lastGrowthAt = this.ports.now();
    }
    this.settle(
      { from, to: snapshot.value, effects, timers: tx.timersAdd ?? [], outbox: tx.outboxAdd ?? [], granted },
      next,
    );
  }

  /**
   * Commits; an invocation that completes gives its scope's slot back and (exclusive) passes
   * its key's lock on, all in the same commit. The limiter is taken before the lock, always.
   * Answers who got the lock; the limiter tells who got the slot (kernel/limiters.ts `settled`).
   */
  private async persist(tx: Transition, context: InvocationContext, effects: InvocationEffect[]): Promise<string[]> {
    const releases = effects.some((e) => e.type === 'releaseLock');
    const { target, exclusive, gated } = context;
    const withLock = async (t: Transition): Promise<string[]> => {
      if (!releases || exclusive !== true || target.key === undefined) {
        await this.ports.store.commit(t);
        return [];
      }
      const change = await this.ports.locks.with(
        this.partition,
        target.service,
        target.key,
        (lock) =>
          lock.change({ type: 'release', invocationId: this.id }, (c) =>
            this.ports.store.commit({ ...t, records: [...(t.records ?? []), c.record] }),
          ),
        target.scope,
        true,
      );
      return change.granted;
    };
    if (!releases || gated !== true || target.scope === undefined) return withLock(tx);
    let locks: string[] = [];
    const scope = target.scope;
    // Urgent: the slot given back lets a waiter run; new invocations asking for one can wait.
    const slot = await this.ports.limiters.with(
      this.partition,
      scope,
      (limiter) =>
        limiter.change({ type: 'release', invocationId: this.id }, async (c) => {
          locks = await withLock({ ...tx, records: [...(tx.records ?? []), ...slotRecords(c)] });
        }),
      true,
    );
    this.ports.limiters.settled(this.partition, scope, slot);
    return locks;
  }

  private settle(done: Committed, next: AttemptHandle | undefined): void {
    this.ports.committed(this, done);
    this.attempt?.flush();
    // Left while the commit was on its way (its partition moved): the replacing actor runs it.
    if (next && this.retired) next.abort('its partition moved to another node');
    else if (next) this.startAttempt(next);
    if (this.snapshot.value !== 'running' && this.attempt) {
      this.attempt.close();
      this.attempt = undefined;
    }
  }

  private startAttempt(attempt: AttemptHandle): void {
    this.attempt?.abort('superseded by a new attempt');
    this.attempt = attempt;
    attempt.start();
  }
}
