/**
 * The actor system: finds or rehydrates invocation actors, creates new invocations, delivers
 * timers and outbox messages to them, and answers whoever waits for a result.
 *
 * Actors are a cache of what the store holds: any of them can be dropped and rebuilt from its
 * snapshot and journal at any time.
 */
import type { Config } from '../config.js';
import type { Registry } from '../registry/registry.js';
import { Transport } from '../protocol/transport.js';
import { encodeInputCommand, encodeNotification, MessageType, type Header, type Notification } from '../protocol/messages.js';
import {
  invocationIdToString,
  newInvocationId,
  parseInvocationId,
  partitionKeyOf,
  randomPartitionKey,
} from '../protocol/ids.js';
import type { JournalEntry, OutboxMessage, Store, Timer } from '../store/types.js';
import type { Completion, InvocationInput, RetryPolicy, Target } from '../../machines/invocation.js';
import type { EffectiveHandler } from '../registry/types.js';
import { ObjectLocks } from './object-locks.js';
import { identityOf, isExclusive, retentionOf } from './identity.js';
import { PromiseQueues } from './promises.js';
import { SingleFlight } from './single-flight.js';
import { KeyedSerialQueue } from './serial-queue.js';
import { grantToStateMutation, isStateMutationId } from './state-mutations.js';
import { InvocationHost, type PersistedInvocation } from './invocation-host.js';
import { partitionOf } from './partitioning.js';
import { TimerService } from './timers.js';
import { parseTimerKey } from './timer-keys.js';
import type { OutboxBody } from './outbox.js';
import { NOT_FOUND, completionResult, targetOutcome, unansweredAttaches } from './attachments.js';
import type { Logger, RuntimeServices } from './services.js';

export interface InvokeRequest {
  target: Target;
  input: Uint8Array;
  headers: Header[];
  retryPolicy: RetryPolicy;
  /** Epoch ms; absent means now. */
  executeAt?: number;
  idempotencyKey?: string;
  /**
   * Recorded as the invocation's idempotency key when it has none (the ULID the ingress gives
   * every call and send, reference §2.5); never used to deduplicate or for retention.
   */
  autoIdempotencyKey?: string;
  invokedBy: 'ingress' | 'service' | 'restart_as_new';
  caller?: { invocationId: string; completionId: number };
  /** Restart-as-new: the old invocation, the journal to start with (Input first; replaces `input`/`headers`), a pinned deployment. */
  restartedFrom?: string;
  journal?: JournalEntry[];
  deploymentId?: string;
  /** Set when the id was chosen earlier (by a caller's journal). */
  invocationId?: string;
}

export interface InvokeResult {
  invocationId: string;
  /** Set for delayed invocations: when they start. */
  executeAt?: number;
  /** The invocation existed already (same idempotency key, or the workflow id's run). */
  previous: boolean;
}

export interface CompletedInvocation {
  id: string;
  target: Target;
  completion: Completion;
  completedAt: number;
}

export type OutputState = { state: 'missing' } | { state: 'pending' } | ({ state: 'completed' } & CompletedInvocation);

export class Runtime implements RuntimeServices {
  readonly timers: TimerService;
  readonly locks: ObjectLocks;
  readonly promises = new PromiseQueues();
  private readonly hosts = new Map<string, InvocationHost>();
  private readonly loading = new SingleFlight<InvocationHost | undefined>();
  /** Creations of one id run one after the other, so "exists?" and "create" cannot interleave. */
  private readonly creating = new KeyedSerialQueue();
  private readonly waiters = new Map<string, Array<(c: CompletedInvocation) => void>>();

  constructor(
    readonly store: Store,
    readonly registry: Registry,
    readonly config: Config,
    readonly log: Logger,
    readonly transport = new Transport(),
  ) {
    this.locks = new ObjectLocks(store);
    this.timers = new TimerService(store, (p, t) => this.onTimer(p, t), () => this.now(), (err) => this.log.error(`timer: ${String(err)}`));
  }

  now(): number {
    return Date.now();
  }

  partitionOfId(id: string): number {
    return partitionOf(parseInvocationId(id).partitionKey, this.config.partitions);
  }

  /**
   * Creates an invocation durably; resolves once it is committed. An invocation with an
   * idempotency key, or a workflow's run, has an id derived from what identifies it; when that
   * invocation exists already it is not created again (`previous: true`).
   */
  async invoke(req: InvokeRequest): Promise<InvokeResult> {
    const handler = this.registry.resolveHandler(req.target.service, req.target.handler);
    const dedupe = identityOf(req, handler);
    const id =
      req.invocationId ??
      dedupe ??
      invocationIdToString(newInvocationId(req.target.key !== undefined ? partitionKeyOf(req.target.key) : randomPartitionKey()));
    if (!dedupe) return this.create(id, req, handler);
    return this.creating.run(id, async () => {
      if (this.hosts.has(id) || (await this.store.loadInvocation(this.partitionOfId(id), id))) return { invocationId: id, previous: true };
      return this.create(id, req, handler);
    });
  }

  private async create(id: string, req: InvokeRequest, handler: EffectiveHandler | undefined): Promise<InvokeResult> {
    const partition = this.partitionOfId(id);
    const now = this.now();
    const exclusive = handler !== undefined && isExclusive(handler) && req.target.key !== undefined;
    const delayed = req.executeAt !== undefined && req.executeAt > now;
    const input: InvocationInput = {
      id,
      target: req.target,
      invokedBy: req.invokedBy,
      retryPolicy: req.retryPolicy,
      now,
      ...(exclusive ? { exclusive } : {}),
      ...(handler ? { completionRetention: retentionOf(req, handler) } : {}),
      ...(req.caller ? { caller: req.caller } : {}),
      ...(req.idempotencyKey !== undefined ? { idempotencyKey: req.idempotencyKey } : {}),
      ...(req.idempotencyKey === undefined && req.autoIdempotencyKey !== undefined ? { idempotencyKey: req.autoIdempotencyKey } : {}),
      ...(req.executeAt !== undefined ? { executeAt: req.executeAt } : {}),
      ...(req.restartedFrom !== undefined ? { restartedFrom: req.restartedFrom } : {}),
      // Pinned now unless it starts later: the first attempt would pin the same deployment, and
      // folding that into the creating commit saves a machine transition per invocation.
      ...(req.deploymentId !== undefined || (!delayed && handler) ? { deploymentId: req.deploymentId ?? handler!.deployment.id } : {}),
    };
    const inputEntry = req.journal ?? { type: MessageType.InputCommand, payload: encodeInputCommand({ headers: req.headers, value: req.input, name: '' }) };
    let host: InvocationHost;
    if (exclusive && !delayed) {
      // Taking the key's lock (or a place in its inbox) is part of the creating commit.
      const actor = await this.locks.get(partition, req.target.service, req.target.key!);
      host = await actor.run(async () => {
        let created: InvocationHost | undefined;
        await actor.change({ type: 'acquire', invocationId: id }, async (change) => {
          created = await InvocationHost.create(this, partition, { ...input, lockHeld: change.granted.includes(id) }, inputEntry, {
            records: [change.record],
          });
          // Known before the key's queue moves on, so a grant finds this actor, not a second copy.
          if (created.status !== 'completed') this.hosts.set(id, created);
        });
        return created!;
      });
    } else {
      host = await InvocationHost.create(this, partition, input, inputEntry);
    }
    if (host.status !== 'completed') this.hosts.set(id, host);
    return { invocationId: id, previous: false, ...(req.executeAt !== undefined ? { executeAt: Math.max(req.executeAt, now) } : {}) };
  }

  /** Queues an invocation that became due for its key's lock (a delayed exclusive call, or after a restart). */
  requestLock(host: InvocationHost): void {
    const { target } = host.context;
    void (async () => {
      const actor = await this.locks.get(host.partition, target.service, target.key!);
      await actor.run(async () => {
        if (actor.holder !== host.id) {
          await actor.change({ type: 'acquire', invocationId: host.id }, (change) => this.store.commit({ partition: host.partition, records: [change.record] }));
        }
      });
      if (actor.holder === host.id) this.grantLock(host.id);
    })().catch((err: unknown) => {
      this.log.error(`invocation ${host.id}: cannot queue for its key: ${String(err)}`);
      setTimeout(() => void this.resume(host.id), 1000).unref();
    });
  }

  /** The key's lock passed to this invocation: it may run now. */
  grantLock(id: string): void {
    if (isStateMutationId(id)) return grantToStateMutation(this, id);
    void (async () => {
      const host = await this.host(id);
      await host?.run(async () => {
        if (host.status === 'pending') host.applyStoredElsewhere({ type: 'lockGranted', now: this.now() });
      });
    })().catch((err: unknown) => this.log.error(`invocation ${id}: cannot start after the lock was granted: ${String(err)}`));
  }

  /** The result once the invocation completes; undefined if there is no such invocation. */
  async attach(id: string): Promise<CompletedInvocation | undefined> {
    const host = await this.host(id);
    if (!host) {
      const done = await this.output(id);
      return done.state === 'completed' ? done : undefined;
    }
    // Checked and registered inside the actor's queue, so a completion cannot slip between.
    const result = await host.run(async () => {
      const snap = completedOf(host.context.id, host.context);
      if (snap) return { done: snap };
      return { wait: new Promise<CompletedInvocation>((resolve) => this.waitFor(id, resolve)) };
    });
    return 'done' in result ? result.done : result.wait;
  }

  async output(id: string): Promise<OutputState> {
    const live = this.hosts.get(id);
    const persisted = live ? { context: live.context } : ((await this.store.loadInvocation(this.partitionOfId(id), id)) as PersistedInvocation | undefined);
    if (!persisted) return { state: 'missing' };
    const done = completedOf(id, persisted.context);
    return done ? { state: 'completed', ...done } : { state: 'pending' };
  }

  /** The live actor of a non-terminal invocation, rebuilt from the store when needed. */
  async host(id: string): Promise<InvocationHost | undefined> {
    const live = this.hosts.get(id);
    if (live && !live.isBroken) return live;
    return this.loading.run(id, async () => {
      const partition = this.partitionOfId(id);
      const persisted = (await this.store.loadInvocation(partition, id)) as PersistedInvocation | undefined;
      if (!persisted || persisted.value === 'completed') return undefined;
      const host = InvocationHost.restore(this, partition, persisted, await this.store.readJournal(partition, id));
      this.hosts.set(id, host);
      return host;
    });
  }

  completed(host: InvocationHost): void {
    this.hosts.delete(host.id);
    const done = completedOf(host.id, host.context);
    const waiting = this.waiters.get(host.id);
    this.waiters.delete(host.id);
    if (done) for (const w of waiting ?? []) w(done);
  }

  lost(host: InvocationHost, err: unknown): void {
    this.log.error(`invocation ${host.id}: commit failed, reloading from the store: ${String(err)}`);
    if (this.hosts.get(host.id) === host) this.hosts.delete(host.id);
    setTimeout(() => void this.resume(host.id), 1000).unref();
  }

  /** Restarts whatever a live actor of this invocation should be doing (after a crash or a lost commit). */
  async resume(id: string): Promise<void> {
    try {
      const host = await this.host(id);
      await host?.run(async () => host.resume());
    } catch (err) {
      this.log.error(`invocation ${id}: cannot resume: ${String(err)}`);
      setTimeout(() => void this.resume(id), 1000).unref();
    }
  }

  deliver(partition: number, messages: OutboxMessage[]): void {
    for (const m of messages) void this.deliverOne(partition, m);
  }

  async deliverOne(partition: number, message: OutboxMessage): Promise<void> {
    const body = message.body as OutboxBody;
    try {
      if (body.kind === 'invoke') await this.invokeFromOutbox(body);
      else if (body.kind === 'complete') {
        const n: Notification = { completionId: body.completionId, ...resultOf(body) };
        await this.notify(body.invocationId, body.notificationType ?? MessageType.CallCompletionNotification, n);
      } else if (body.kind === 'signal') {
        const n: Notification = { signalId: body.signalId, ...resultOf(body) };
        await this.notify(body.invocationId, MessageType.SignalNotification, n);
      } else {
        throw new Error(`unknown outbox message kind '${(body as { kind: string }).kind}'`);
      }
      await this.store.commit({ partition, outboxRemove: [message.id] });
    } catch (err) {
      this.log.error(`outbox ${message.id}: ${String(err)}; retrying`);
      setTimeout(() => void this.deliverOne(partition, message), 1000).unref();
    }
  }

  async onTimer(partition: number, timer: Timer): Promise<void> {
    const purpose = parseTimerKey(timer.key);
    const remove = { timersRemove: [timer.key] };
    if (purpose?.kind === 'expire') {
      // Retention is over: the invocation, its journal and its id are gone (reference §2.6 "purged").
      await this.store.commit({ partition, deleteInvocations: [purpose.invocationId], ...remove });
      return;
    }
    const host = purpose ? await this.host(purpose.invocationId) : undefined;
    if (!purpose || !host) {
      await this.store.commit({ partition, ...remove });
      return;
    }
    await host.run(async () => {
      const now = this.now();
      if (purpose.kind === 'sleep') {
        if (host.journal.completions.has(purpose.completionId)) return host.commit({ write: remove });
        const n = encodeNotification({ completionId: purpose.completionId, void: true });
        return host.commit({ entries: [{ type: MessageType.SleepCompletionNotification, payload: n }], write: remove });
      }
      const expected = purpose.kind === 'start' ? 'scheduled' : 'backingOff';
      if (host.status !== expected) return host.commit({ write: remove });
      return host.commit({ events: [{ type: 'timerDue', now }], write: remove });
    });
  }

  async stop(): Promise<void> {
    this.timers.stop();
    for (const host of this.hosts.values()) host.attempt?.abort('server shutting down');
    this.transport.close();
  }

  private waitFor(id: string, resolve: (c: CompletedInvocation) => void): void {
    const list = this.waiters.get(id) ?? [];
    list.push(resolve);
    this.waiters.set(id, list);
  }

  /** Appends a notification unless the journal already has one for the same id (idempotent delivery). */
  private async notify(id: string, type: number, n: Notification): Promise<void> {
    const host = await this.host(id);
    if (!host) return;
    await host.run(async () => {
      if (host.status === 'completed') return;
      const j = host.journal;
      const seen = n.completionId !== undefined ? j.completions.has(n.completionId) : n.signalId !== undefined && j.signals.has(n.signalId);
      if (seen) return;
      await host.commit({ entries: [{ type, payload: encodeNotification(n) }] });
    });
  }

  private async invokeFromOutbox(body: Extract<OutboxBody, { kind: 'invoke' }>): Promise<void> {
    const partition = this.partitionOfId(body.invocationId);
    const existing = this.hosts.get(body.invocationId)?.context ?? ((await this.store.loadInvocation(partition, body.invocationId)) as PersistedInvocation | undefined)?.context;
    if (existing) {
      // Created by this very message before (a redelivery), or a one-way send: nothing to do.
      if (!body.caller || (existing.caller?.invocationId === body.caller.invocationId && existing.caller.completionId === body.caller.completionId)) return;
      await this.answerCallToExisting(body.caller, body.invocationId, existing.exclusive === true && body.target.serviceTy === 'Workflow');
      return;
    }
    const handler = this.registry.resolveHandler(body.target.service, body.target.handler);
    if (!handler) throw new Error(`callee ${body.target.service}/${body.target.handler} is not registered`);
    const created = await this.invoke({
      target: body.target,
      input: Buffer.from(body.input, 'base64'),
      headers: body.headers,
      retryPolicy: handler.retryPolicy,
      invokedBy: 'service',
      invocationId: body.invocationId,
      ...(body.caller ? { caller: body.caller } : {}),
      ...(body.executeAt !== undefined ? { executeAt: body.executeAt } : {}),
      ...(body.idempotencyKey !== undefined ? { idempotencyKey: body.idempotencyKey } : {}),
    });
    // Another caller created it between the check above and this creation.
    if (created.previous && body.caller) await this.answerCallToExisting(body.caller, body.invocationId, isExclusive(handler) && body.target.serviceTy === 'Workflow');
  }

  /**
   * A call named an invocation that exists already (same idempotency key, or a workflow id
   * whose run was submitted before): the caller gets its result, or for a workflow run the
   * reference's 409. The outbox message stays until this is stored, so a crash while waiting
   * only makes the wait start again.
   */
  private async answerCallToExisting(caller: { invocationId: string; completionId: number }, targetId: string, workflowRun: boolean): Promise<void> {
    const result = workflowRun
      ? { failure: { code: 409, message: 'the workflow method was already invoked' } }
      : await this.attach(targetId).then((done) => (done ? completionResult(done.completion) : { failure: NOT_FOUND }));
    await this.notify(caller.invocationId, MessageType.CallCompletionNotification, { completionId: caller.completionId, ...result });
  }

  /**
   * Stores a signal (an awakeable's completion) in the target invocation's journal; resolves
   * once it is durable, so the ingress can answer 202 (service-protocol.md §9.6, reference
   * §2.8). A target that does not exist or has completed is ignored, as Restate does.
   */
  async signal(invocationId: string, signalId: number, result: { value: Uint8Array } | { failure: NonNullable<Notification['failure']> }): Promise<void> {
    await this.notify(invocationId, MessageType.SignalNotification, { signalId, ...result });
  }

  /** An Attach command was stored and its target is not done: answer it when it is (attachments.ts, §9.9). */
  watchAttach(callerId: string, completionId: number, targetId: string): void {
    void (async () => {
      let done = await this.attach(targetId);
      // Not stored yet but its invoke message is on the way: wait for it to be created.
      for (let delay = 50; !done && (await targetOutcome(this.store, this.config.partitions, targetId)).state !== 'missing'; delay = Math.min(delay * 2, 2000)) {
        await new Promise((r) => setTimeout(r, delay));
        done = await this.attach(targetId);
      }
      const result = done ? completionResult(done.completion) : { failure: NOT_FOUND };
      await this.notify(callerId, MessageType.AttachInvocationCompletionNotification, { completionId, ...result });
    })().catch((err: unknown) => {
      this.log.error(`invocation ${callerId}: attach to ${targetId}: ${String(err)}; retrying`);
      setTimeout(() => this.watchAttach(callerId, completionId, targetId), 1000).unref();
    });
  }

  /** At start-up: the in-memory attach waits died with the last process; the journals say which to renew. */
  async recoverAttachments(): Promise<number> {
    let renewed = 0;
    for (let p = 0; p < this.config.partitions; p++) {
      for (const id of await this.store.activeInvocations(p)) {
        const host = await this.host(id);
        for (const w of host ? unansweredAttaches(host.journal) : []) {
          renewed++;
          this.watchAttach(id, w.completionId, w.targetId);
        }
      }
    }
    return renewed;
  }
}

function completedOf(id: string, context: PersistedInvocation['context']): CompletedInvocation | undefined {
  if (!context.completion || context.completedAt === undefined) return undefined;
  return { id, target: context.target, completion: context.completion, completedAt: context.completedAt };
}

function resultOf(body: { value?: string; failure?: Notification['failure'] }): Pick<Notification, 'value' | 'failure' | 'void'> {
  if (body.failure) return { failure: body.failure };
  if (body.value !== undefined) return { value: Buffer.from(body.value, 'base64') };
  return { void: true };
}
