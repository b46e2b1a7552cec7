/**
 * Creating invocations and answering for their results: invoke (once per deterministic id),
 * attach (wait for the result), output (peek at it), and the waiters a completion answers.
 */
import type { InvocationInput } from '../../../machines/invocation.js';
import { encodeInputCommand, MessageType } from '../../protocol/messages.js';
import { invocationIdToString, newInvocationId, partitionKeyOf, randomPartitionKey } from '../../protocol/ids.js';
import type { Registry } from '../../registry/registry.js';
import { vqueueIdOf } from '../../registry/resource-id.js';
import type { EffectiveHandler } from '../../registry/types.js';
import type { JournalEntry } from '../../store/types.js';
import { InvocationActor, type ActorPorts } from '../kernel/invocation-actor.js';
import type { ObjectLocks } from '../kernel/object-keys.js';
import { completedOf } from '../kernel/persisted.js';
import { KeyedSerialQueue } from '../kernel/serial-queue.js';
import { randomKeyIn } from '../kernel/partitioning.js';
import type { CompletedInvocation, InvokeRequest, InvokeResult, OutputState, Placement } from '../types.js';
import type { ActorCache } from './actors.js';
import { identityOf, isExclusive, retentionOf } from './identity.js';

export interface InvocationsDeps {
  readonly registry: Registry;
  readonly actors: ActorCache;
  readonly locks: ObjectLocks;
  readonly ports: ActorPorts;
  readonly placement: Placement;
  readonly partitions: number;
  now(): number;
}

/** How often a wait for an invocation another node runs looks at the store. */
const ELSEWHERE_POLL_MS = 200;

export class Invocations {
  /** Creations of one id run one after the other, so "exists?" and "create" cannot interleave. */
  private readonly creating = new KeyedSerialQueue();
  private readonly waiters = new Map<string, Array<(c: CompletedInvocation) => void>>();

  constructor(private readonly deps: InvocationsDeps) {}

  /**
   * Creates an invocation durably; resolves once it is committed. An invocation with an
   * idempotency key, or a workflow's run, has an id derived from what identifies it; when that
   * invocation exists already it is not created again (`previous: true`).
   */
  async invoke(req: InvokeRequest): Promise<InvokeResult> {
    const handler = this.deps.registry.resolveHandler(req.target.service, req.target.handler);
    const dedupe = identityOf(req, handler);
    const id =
      req.invocationId ??
      dedupe ??
      invocationIdToString(newInvocationId(this.partitionKeyFor(req.target.scope ?? req.target.key)));
    if (!dedupe && !req.createOnce) return this.create(id, req, handler);
    return this.creating.run(id, async () => {
      if (this.deps.actors.has(id) || (await this.deps.actors.stored(id))) return { invocationId: id, previous: true };
      return this.create(id, req, handler);
    });
  }

  /**
   * The partition the request's invocation will live in, and its id, chosen before creation
   * (so that trying again creates the same one): without a key, one of a partition this node
   * owns, so the invocation runs here.
   */
  placementOf(req: InvokeRequest): { partition: number; id: string } {
    const key = req.target.scope ?? req.target.key;
    const id =
      req.invocationId ??
      identityOf(req, this.deps.registry.resolveHandler(req.target.service, req.target.handler)) ??
      invocationIdToString(newInvocationId(this.partitionKeyFor(key)));
    return { partition: this.deps.actors.partitionOf(id), id };
  }

  /** A key's partition key; without a key one of a partition this node owns (any, when it owns none yet). */
  private partitionKeyFor(key: string | undefined): bigint {
    if (key !== undefined) return partitionKeyOf(key);
    const owned = this.deps.placement.owned();
    if (owned.length === 0) return randomPartitionKey();
    return randomKeyIn(owned[Math.floor(Math.random() * owned.length)]!, this.deps.partitions);
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
    const persisted = await this.deps.actors.persisted(id);
    if (!persisted) return { state: 'missing' };
    const done = completedOf(id, persisted.context);
    return done ? { state: 'completed', ...done } : { state: 'pending' };
  }

  /** The invocation completed (committed): answer whoever waits for it. */
  completed(actor: InvocationActor): void {
    this.deps.actors.remove(actor);
    const done = completedOf(actor.id, actor.context);
    const waiting = this.waiters.get(actor.id);
    this.waiters.delete(actor.id);
    if (done) for (const w of waiting ?? []) w(done);
  }

  private async create(id: string, req: InvokeRequest, handler: EffectiveHandler | undefined): Promise<InvokeResult> {
    const partition = this.deps.actors.partitionOf(id);
    const now = this.deps.now();
    const input = this.inputOf(id, req, handler, now);
    const entries: JournalEntry[] = req.journal ?? [{ type: MessageType.InputCommand, payload: encodeInputCommand({ headers: req.headers, value: req.input, name: '' }) }];
    const delayed = req.executeAt !== undefined && req.executeAt > now;
    // A scoped invocation asks its scope for a slot once it is stored (machines/invocation.ts
    // `requestSlot`), and takes its key's lock only once it has one.
    const actor =
      input.exclusive && !input.gated && !delayed
        ? await this.createHoldingLock(partition, input, entries)
        : await InvocationActor.create(this.deps.ports, partition, input, entries);
    if (actor.status !== 'completed') this.deps.actors.add(actor);
    return { invocationId: id, previous: false, ...(req.executeAt !== undefined ? { executeAt: Math.max(req.executeAt, now) } : {}) };
  }

  /** Taking the key's lock (or a place in its inbox) is part of the creating commit. */
  private async createHoldingLock(partition: number, input: InvocationInput, entries: JournalEntry[]): Promise<InvocationActor> {
    const { service, key, scope } = input.target;
    return this.deps.locks.with(
      partition,
      service,
      key!,
      async (lock) => {
        let created: InvocationActor | undefined;
        await lock.change({ type: 'acquire', invocationId: input.id }, async (change) => {
          created = await InvocationActor.create(this.deps.ports, partition, { ...input, lockHeld: change.granted.includes(input.id) }, entries, { records: [change.record] });
          // Known before the key's queue moves on, so a grant finds this actor, not a second copy.
          if (created.status !== 'completed') this.deps.actors.add(created);
        });
        return created!;
      },
      scope,
    );
  }

  private inputOf(id: string, req: InvokeRequest, handler: EffectiveHandler | undefined, now: number): InvocationInput {
    const exclusive = handler !== undefined && isExclusive(handler) && req.target.key !== undefined;
    const delayed = req.executeAt !== undefined && req.executeAt > now;
    const idempotencyKey = req.idempotencyKey ?? req.autoIdempotencyKey;
    // Pinned now unless it starts later: the first attempt would pin the same deployment, and
    // folding that into the creating commit saves a machine transition per invocation.
    const deploymentId = req.deploymentId ?? (!delayed ? handler?.deployment.id : undefined);
    return {
      id,
      target: req.target,
      invokedBy: req.invokedBy,
      retryPolicy: req.retryPolicy,
      now,
      ...(exclusive ? { exclusive } : {}),
      ...(handler ? { completionRetention: retentionOf(req, handler) } : {}),
      ...(req.caller ? { caller: req.caller } : {}),
      ...(req.parent ? { parent: req.parent } : {}),
      ...(req.subscriptionId !== undefined ? { subscriptionId: req.subscriptionId } : {}),
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      ...(req.executeAt !== undefined ? { executeAt: req.executeAt } : {}),
      ...(req.restartedFrom !== undefined ? { restartedFrom: req.restartedFrom } : {}),
      ...(deploymentId !== undefined ? { deploymentId } : {}),
      ...(req.traceparent ? { traceparent: req.traceparent } : {}),
      ...this.flowOf(req, exclusive),
    };
  }

  /** A scoped invocation waits for its scope's limiter; its virtual queue is named by service, scope, limit key and lock. */
  private flowOf(req: InvokeRequest, exclusive: boolean): Partial<InvocationInput> {
    const { scope, service, key } = req.target;
    if (scope === undefined) return {};
    const lockName = exclusive ? `${service}/${key!}` : null;
    const vqueueId = vqueueIdOf(partitionKeyOf(scope), [service, scope, req.limitKey ?? null, lockName]);
    return { gated: true, vqueueId, ...(req.limitKey !== undefined ? { limitKey: req.limitKey } : {}) };
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
    for (const id of this.waiters.keys()) {
      if (this.deps.actors.partitionOf(id) !== partition) continue;
      void this.fromStore(id).then((done) => {
        const waiting = this.waiters.get(id);
        if (!done || !waiting) return;
        this.waiters.delete(id);
        for (const w of waiting) w(done);
      });
    }
  }

  /**
   * Waits, reading the store, until an invocation another node runs completes; undefined once
   * it is gone. Never rejects: while the store is away it reads again (`moved` does not await it).
   */
  private async fromStore(id: string): Promise<CompletedInvocation | undefined> {
    for (;;) {
      const out = await this.output(id).catch(() => ({ state: 'pending' }) as const);
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
  }
}
