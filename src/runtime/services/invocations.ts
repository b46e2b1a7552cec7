/**
 * Creating invocations and answering for their results: create (once per deterministic id),
 * call (create and wait), attach (wait for the result), output (peek at it), and the waiters a
 * completion answers. What a request implies was decided at its admission (./admission.ts).
 */
import { InvocationActor, type ActorPorts } from '../kernel/invocation-actor.js';
import type { ObjectLocks } from '../kernel/object-keys.js';
import { completedOf, type CompletedInvocation, type PersistedInvocation } from '../../model/persisted.js';
import { KeyedSerialQueue } from '../../serial-queue.js';
import { StoreUnavailable } from '../../store/types.js';
import type { CallResult, InvokeResult, OutputState, Placement } from '../types.js';
import type { ActorCache } from './actors.js';
import type { Admission } from './admission.js';

/** A scope's backlog bounds (services/slot-grants.ts `reserve`). */
export interface BacklogGate {
  /** Refuses (`TooManyRequests`) or counts the request in; the answer takes it back. */
  reserve(partition: number, scope: string, id: string, limitKey: string | undefined): Promise<() => void>;
}

/** Where admissions are counted, so that attempts start bounded while they run (invoker/start-gate.ts). */
export interface AdmissionsInFlight {
  admitting<T>(work: () => Promise<T>): Promise<T>;
}

export interface InvocationsDeps {
  readonly admissions: AdmissionsInFlight;
  readonly actors: ActorCache;
  readonly locks: ObjectLocks;
  readonly ports: ActorPorts;
  readonly placement: Placement;
  readonly backlog: BacklogGate;
}

/** How often a wait for an invocation another node runs looks at the store. */
const ELSEWHERE_POLL_MS = 200;

export class Invocations {
  /** Creations of one id run one after the other, so "exists?" and "create" cannot interleave. */
  private readonly creating = new KeyedSerialQueue();
  private readonly waiters = new Map<string, Array<(c: CompletedInvocation) => void>>();

  constructor(private readonly deps: InvocationsDeps) {}

  /**
   * Creates an admitted invocation durably; resolves once it is committed. One that must exist
   * once (`Admission.once`) and exists already is not created again (`previous: true`).
   */
  create(a: Admission): Promise<InvokeResult> {
    return this.deps.admissions.admitting(async () => {
      if (!a.once) return this.createNew(a);
      return this.creating.run(a.id, async () => {
        if (this.deps.actors.has(a.id) || (await this.deps.actors.stored(a.id)))
          return a.ownIfFound ? this.created(a) : { invocationId: a.id, previous: true };
        return this.createNew(a);
      });
    });
  }

  /** The answer to creating it: its id, and when it starts if it was asked to start later. */
  private created(a: Admission): InvokeResult {
    const { executeAt, now } = a.input;
    return {
      invocationId: a.id,
      previous: false,
      ...(executeAt !== undefined ? { executeAt: Math.max(executeAt, now) } : {}),
    };
  }

  /**
   * Creates the invocation and waits for its outcome: one operation, so a call forwarded to the
   * partition's owner crosses once. A workflow's run submitted before is answered at once (the
   * caller answers 409); another request that existed before (its idempotency key) gets that
   * invocation's outcome, `stored` when it had completed already (reference §2.5, §2.6).
   * Once it is created, a store that fails the wait fails the call as a change that may have
   * been applied: it was, and a try again must find it (services/confirmed-writes.ts).
   */
  async call(a: Admission): Promise<CallResult> {
    const created = await this.create(a);
    try {
      if (created.previous) {
        if (a.workflowRun) return created;
        const before = await this.output(a.id);
        if (before.state === 'completed') return { ...created, done: before, stored: true };
        if (before.state === 'missing') return created;
      }
      const done = await this.attach(a.id);
      return done ? { ...created, done } : created;
    } catch (err) {
      throw err instanceof StoreUnavailable && !err.mayHaveApplied ? new StoreUnavailable(err.message, true) : err;
    }
  }

  /** The result once the invocation completes; undefined if there is no such invocation. */
  async attach(id: string): Promise<CompletedInvocation | undefined> {
    if (!this.deps.placement.owns(this.deps.actors.partitionOf(id))) return this.fromStore(id);
    // Checked and registered inside the actor's queue, so a completion cannot slip between.
    const live = await this.deps.actors.with(id, async (actor) => {
      const done = completedOf(actor.id, actor.context);
      if (done) return { done };
      return { wait: new Promise<CompletedInvocation>((resolve) => this.waitFor(id, resolve)) };
    });
    if (live.found) return 'done' in live.value ? live.value.done : live.value.wait;
    const done = await this.output(id);
    return done.state === 'completed' ? done : undefined;
  }

  async output(id: string): Promise<OutputState> {
    return outputOf(id, await this.deps.actors.persisted(id));
  }

  /** The invocation completed (committed): answer whoever waits for it. */
  completed(actor: InvocationActor): void {
    this.deps.actors.remove(actor);
    const done = completedOf(actor.id, actor.context);
    const waiting = this.waiters.get(actor.id);
    this.waiters.delete(actor.id);
    if (done) for (const w of waiting ?? []) w(done);
  }

  private async createNew(a: Admission): Promise<InvokeResult> {
    const { input, partition, entries } = a;
    // Refused before anything is stored when its scope's backlog is full.
    const takeBack = a.bounded
      ? await this.deps.backlog.reserve(partition, input.target.scope!, a.id, input.limitKey)
      : undefined;
    try {
      // A scoped invocation asks its scope for a slot once it is stored (machines/invocation.ts
      // `requestSlot`), and takes its key's lock only once it has one.
      const actor =
        input.exclusive && !input.gated && !a.delayed
          ? await this.createHoldingLock(a)
          : await InvocationActor.create(this.deps.ports, partition, input, entries, {}, a.handler);
      if (actor.status !== 'completed') this.deps.actors.add(actor);
    } catch (err) {
      takeBack?.();
      throw err;
    }
    return this.created(a);
  }

  /** Taking the key's lock (or a place in its inbox) is part of the creating commit. */
  private async createHoldingLock(a: Admission): Promise<InvocationActor> {
    const { input, partition, entries } = a;
    const { service, key, scope } = input.target;
    return this.deps.locks.with(
      partition,
      service,
      key!,
      async (lock) => {
        let created: InvocationActor | undefined;
        await lock.change({ type: 'acquire', invocationId: input.id }, async (change) => {
          // Known before the key's queue moves on (at once: the next change of the key may be
          // computed while this commit is on its way), so a grant finds this actor, not a second copy.
          const lockHeld = change.granted.includes(input.id);
          created = await InvocationActor.create(
            this.deps.ports,
            partition,
            { ...input, lockHeld },
            entries,
            // Only joining the inbox: nobody needs this commit before the lock comes to it (a
            // send's 202 waits for it, at most LAZY_COMMIT_MS more).
            { records: [change.record], ...(lockHeld ? {} : { lazy: true }) },
            a.handler,
            (made) => this.deps.actors.add(made),
          );
          if (created.status === 'completed') this.deps.actors.remove(created);
        });
        return created!;
      },
      scope,
      true,
    );
  }

  /**
   * After a commit with an unknown outcome in `partition`: waiters of invocations that are no
   * longer live get the stored answer (the completing commit may have landed, its reply lost).
   */
  async settleWaiters(partition: number): Promise<void> {
    for (const id of [...this.waiters.keys()]) {
      if (this.deps.actors.partitionOf(id) !== partition || this.deps.actors.peek(id)) continue;
      const out = await this.output(id);
      if (out.state !== 'completed') continue;
      const waiting = this.waiters.get(id);
      this.waiters.delete(id);
      for (const w of waiting ?? []) w(out);
    }
  }

  /**
   * The partition moved to another node, which completes its invocations now: whoever waits
   * here for one of them is answered from the store instead.
   */
  moved(partition: number): void {
    for (const id of this.waiters.keys()) if (this.deps.actors.partitionOf(id) === partition) this.answerFromStore(id);
  }

  /** Whoever waits here for `id` is answered once the store has its outcome. */
  private answerFromStore(id: string): void {
    void this.fromStore(id).then((done) => {
      const waiting = this.waiters.get(id);
      if (!done || !waiting) return;
      this.waiters.delete(id);
      for (const w of waiting) w(done);
    });
  }

  /**
   * Waits, reading the store, until an invocation another node runs completes; undefined once
   * it is gone. Never rejects: while the store is away it reads again (`moved` does not await it).
   * The store itself, not this node's actors: one loaded here after its partition left (a late
   * job) is a stale copy that never completes.
   */
  private async fromStore(id: string): Promise<CompletedInvocation | undefined> {
    for (;;) {
      const out = await this.deps.actors.stored(id).then(
        (p) => outputOf(id, p),
        () => ({ state: 'pending' }) as const,
      );
      if (out.state === 'completed') return out;
      if (out.state === 'missing') return undefined;
      // Back here meanwhile: the local completion answers (once the store lets it load).
      if (this.deps.placement.owns(this.deps.actors.partitionOf(id))) {
        try {
          return await this.attach(id);
        } catch {
          // The store is away: read again after the pause.
        }
      }
      await new Promise((r) => setTimeout(r, ELSEWHERE_POLL_MS));
    }
  }

  private waitFor(id: string, resolve: (c: CompletedInvocation) => void): void {
    const list = this.waiters.get(id) ?? [];
    list.push(resolve);
    this.waiters.set(id, list);
    // The partition left while this wait was being set up (after `moved` looked at the
    // waiters): nothing here will complete it any more.
    if (!this.deps.placement.owns(this.deps.actors.partitionOf(id))) this.answerFromStore(id);
  }
}

/** What a persisted invocation (or none) says of its outcome. */
function outputOf(id: string, persisted: PersistedInvocation | undefined): OutputState {
  if (!persisted) return { state: 'missing' };
  const done = completedOf(id, persisted.context);
  return done ? { state: 'completed', ...done } : { state: 'pending' };
}
