/**
 * The live actor of one invocation: its machine snapshot, its journal, its current attempt.
 *
 * Everything that changes an invocation runs as a job on its queue, one at a time, and ends
 * in one `commit`: machine events → next snapshot + effects, journal appends and the writes
 * that go with them, all in ONE store transition; only then are effects performed (design.md,
 * "The invariant"). If a commit fails the in-memory actor is thrown away and rebuilt from the
 * store, which still holds the last committed state.
 */
import type { SnapshotFrom } from 'xstate';
import {
  invocationMachine,
  invocationSteps,
  type Completion,
  type InvocationContext,
  type InvocationEvent,
  type InvocationInput,
} from '../../machines/invocation.js';
import type { JournalEntry, OutboxMessage, Timer, Transition } from '../store/types.js';
import { JournalView } from './journal.js';
import { isSatisfied } from './awaiting.js';
import { timerKey } from './timer-keys.js';
import type { OutboxBody } from './outbox.js';
import type { RuntimeServices } from './services.js';
import { Attempt } from './attempt.js';
import { SerialQueue } from './serial-queue.js';
import { historyEntries, type SteppedEvent } from './transition-history.js';

export type InvocationSnapshot = SnapshotFrom<typeof invocationMachine>;

/** The JSON form kept in the store: enough to rebuild the snapshot with `resolveState`. */
export interface PersistedInvocation {
  value: string;
  context: InvocationContext;
}

export interface Step {
  events?: InvocationEvent[];
  entries?: JournalEntry[];
  write?: Omit<Transition, 'partition' | 'invocations' | 'journal'>;
}

type Action = { type: string; params?: unknown };

export class InvocationHost {
  attempt: Attempt | undefined;
  private attemptSeq = 0;
  private readonly queue = new SerialQueue();
  private broken = false;
  /** Steps taken in memory only (see `applyStoredElsewhere`), from `from`; the next commit stores them. */
  private unstored: { from: InvocationSnapshot; steps: SteppedEvent[] } | undefined;
  /** Failed attempts since the journal last grew (Start field 7; kept in memory, best effort). */
  failuresSinceGrowth = 0;
  lastGrowthAt: number;

  private constructor(
    readonly services: RuntimeServices,
    readonly id: string,
    readonly partition: number,
    public snapshot: InvocationSnapshot,
    readonly journal: JournalView,
  ) {
    this.lastGrowthAt = snapshot.context.modifiedAt;
  }

  static restore(services: RuntimeServices, partition: number, persisted: PersistedInvocation, entries: JournalEntry[]): InvocationHost {
    const snapshot = invocationMachine.resolveState({ value: persisted.value, context: persisted.context });
    return new InvocationHost(services, persisted.context.id, partition, snapshot, new JournalView(entries));
  }

  /** Creates, commits and starts a new invocation with its Input entry. */
  static async create(services: RuntimeServices, partition: number, input: InvocationInput, inputEntry: JournalEntry | JournalEntry[], extra: Step['write'] = {}): Promise<InvocationHost> {
    const [snapshot, actions] = invocationSteps.initial(input);
    const host = new InvocationHost(services, input.id, partition, snapshot, new JournalView());
    const init: SteppedEvent = { event: { type: 'xstate.init', now: input.now }, snapshot };
    await host.run(() => host.commitResolved(undefined, [init], actions as Action[], { entries: Array.isArray(inputEntry) ? inputEntry : [inputEntry], write: extra }));
    return host;
  }

  get status(): string {
    return String(this.snapshot.value);
  }

  get context(): InvocationContext {
    return this.snapshot.context;
  }

  get isBroken(): boolean {
    return this.broken;
  }

  /** Runs `job` after every earlier job of this invocation. */
  run<T>(job: () => Promise<T>): Promise<T> {
    return this.queue.run(job);
  }

  /** Applies events and appends entries in one commit, then performs the effects. Call inside `run`. */
  async commit(step: Step): Promise<void> {
    let snapshot = this.snapshot;
    const stepped: SteppedEvent[] = [];
    const actions: Action[] = [];
    for (const event of step.events ?? []) {
      const [next, acts] = invocationSteps.next(snapshot, event);
      snapshot = next;
      stepped.push({ event, snapshot });
      actions.push(...(acts as Action[]));
    }
    await this.commitResolved(this.snapshot, stepped, actions, step);
  }

  /** Commits the steps taken from `from` (undefined for a new invocation), then performs `actions`. */
  private async commitResolved(from: InvocationSnapshot | undefined, stepped: SteppedEvent[], actions: Action[], step: Step): Promise<void> {
    if (this.broken) throw new Error(`invocation ${this.id} must be reloaded`);
    const steps = [...(this.unstored?.steps ?? []), ...stepped];
    let snapshot = steps.at(-1)?.snapshot ?? this.snapshot;
    const entries = step.entries ?? [];
    const at = this.journal.length;
    // The journal view is updated first so that the race check below sees the new
    // notifications; a failed commit discards this whole actor anyway.
    for (const e of entries) this.journal.push(e);
    if (snapshot.value === 'suspended' && snapshot.context.awaiting && isSatisfied(snapshot.context.awaiting, this.journal)) {
      const wake = { type: 'wake' as const, now: this.services.now() };
      const [woken, acts] = invocationSteps.next(snapshot, wake);
      snapshot = woken;
      steps.push({ event: wake, snapshot });
      actions.push(...(acts as Action[]));
    }

    const timersAdd: Timer[] = [...(step.write?.timersAdd ?? [])];
    const outboxAdd: OutboxMessage[] = [...(step.write?.outboxAdd ?? [])];
    for (const a of actions) {
      if (a.type === 'armTimer') {
        const p = a.params as { kind: 'start' | 'retry' | 'expire'; dueAt: number };
        timersAdd.push({ key: timerKey[p.kind](this.id), dueAt: p.dueAt });
      } else if (a.type === 'respond' && snapshot.context.caller && snapshot.context.completion) {
        outboxAdd.push({ id: `${this.id}:result`, body: resultMessage(snapshot.context.caller, snapshot.context.completion) });
      }
    }
    const completed = snapshot.status === 'done';
    const history = historyEntries(this.unstored?.from ?? from, steps);
    const tx: Transition = {
      ...step.write,
      partition: this.partition,
      ...(steps.length > 0 ? { invocations: [{ id: this.id, snapshot: persist(snapshot), active: !completed }] } : {}),
      ...(entries.length > 0 ? { journal: [{ id: this.id, at, entries }] } : {}),
      ...(history.length > 0 ? { history: [{ id: this.id, entries: history }] } : {}),
      timersAdd,
      outboxAdd,
    };
    // The next attempt's stream opens while the commit that starts it is stored (Attempt.connect).
    const nextAttempt = actions.some((a) => a.type === 'startAttempt') ? new Attempt(this, ++this.attemptSeq) : undefined;
    nextAttempt?.connect(snapshot.context);
    const { target, exclusive } = snapshot.context;
    const releases = exclusive === true && target.key !== undefined && actions.some((a) => a.type === 'releaseLock');
    let granted: string[] = [];
    try {
      if (releases) {
        // The lock passes on in the same commit that completes this invocation.
        const actor = await this.services.locks.get(this.partition, target.service, target.key!);
        const change = await actor.run(() =>
          actor.change({ type: 'release', invocationId: this.id }, (c) =>
            this.services.store.commit({ ...tx, records: [...(tx.records ?? []), c.record] }),
          ),
        );
        granted = change.granted;
      } else {
        await this.services.store.commit(tx);
      }
    } catch (err) {
      this.broken = true;
      this.attempt?.abort('store commit failed');
      nextAttempt?.abort('store commit failed');
      this.services.lost(this, err);
      throw err;
    }
    this.snapshot = snapshot;
    this.unstored = undefined;
    if (entries.length > 0) {
      this.failuresSinceGrowth = 0;
      this.lastGrowthAt = this.services.now();
    }
    this.services.timers.added(this.partition, timersAdd);
    this.services.deliver(this.partition, outboxAdd);
    this.attempt?.flush();
    for (const a of actions) {
      if (a.type === 'startAttempt') this.startAttempt(nextAttempt);
      else if (a.type === 'requestLock') this.services.requestLock(this);
      else if (a.type === 'respond') this.services.completed(this);
    }
    for (const id of granted) this.services.grantLock(id);
    if (snapshot.value !== 'running' && this.attempt) {
      this.attempt.close();
      this.attempt = undefined;
    }
  }

  /**
   * Applies an event whose fact is already durable in another record (a lock grant, stored in
   * the key's record by the commit that released it), so it needs no commit of its own: the
   * effects follow at once and the snapshot is stored with the invocation's next commit. After
   * a crash in between, `resume` derives the same event from that record again.
   * Call inside `run`.
   */
  applyStoredElsewhere(event: InvocationEvent): void {
    const [next, actions] = invocationSteps.next(this.snapshot, event);
    this.unstored ??= { from: this.snapshot, steps: [] };
    this.unstored.steps.push({ event, snapshot: next });
    this.snapshot = next;
    for (const a of actions as Action[]) if (a.type === 'startAttempt') this.startAttempt();
  }

  /** Redoes what the committed state asks for, after a rehydration. Call inside `run`. */
  async resume(): Promise<void> {
    if (this.status === 'running' && !this.attempt) this.startAttempt();
    else if (this.status === 'pending') this.services.requestLock(this);
    else if (this.status === 'suspended' && this.context.awaiting && isSatisfied(this.context.awaiting, this.journal)) {
      await this.commit({ events: [{ type: 'wake', now: this.services.now() }] });
    }
  }

  private startAttempt(prepared?: Attempt): void {
    this.attempt?.abort('superseded by a new attempt');
    const attempt = prepared ?? new Attempt(this, ++this.attemptSeq);
    this.attempt = attempt;
    attempt.start();
  }

  /** Marks the attempt as failed (stream broke, timeout, bad response) unless it already ended. */
  attemptBroken(attempt: Attempt, message: string, code = 500): void {
    void this.run(async () => {
      if (this.attempt !== attempt || this.status !== 'running') return;
      this.failuresSinceGrowth++;
      await this.commit({ events: [{ type: 'attemptFailed', failure: { code, message }, now: this.services.now() }] });
    }).catch((err) => this.services.log.error(`invocation ${this.id}: ${String(err)}`));
  }
}

export function persist(snapshot: InvocationSnapshot): PersistedInvocation {
  return { value: String(snapshot.value), context: snapshot.context };
}

function resultMessage(caller: { invocationId: string; completionId: number }, completion: Completion): OutboxBody {
  return 'ok' in completion
    ? { kind: 'complete', invocationId: caller.invocationId, completionId: caller.completionId, value: completion.ok }
    : { kind: 'complete', invocationId: caller.invocationId, completionId: caller.completionId, failure: completion.failure };
}
