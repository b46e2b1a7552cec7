/**
 * The runtime's composition root and its face towards the ingress and the admin API.
 *
 * It builds the parts and wires them: the kernel (kernel/: actors that commit, then perform),
 * the invoker (invoker/: attempts towards deployments) and the services (services/: creating
 * invocations, delivering outbox messages and timers, locks, operator actions, recovery).
 * Each part gets only the narrow interface it needs; this file is the one place that knows
 * them all. Imports point downwards: runtime.ts → services → invoker → kernel.
 */
import type { Config } from '../config.js';
import { Conflict, NotFound } from '../errors.js';
import { MessageType, type Notification } from '../protocol/messages.js';
import { Transport } from '../protocol/transport.js';
import type { Registry } from '../registry/registry.js';
import { HeldWrites } from '../store/held-writes.js';
import type { Store } from '../store/types.js';
import { vqueuePartitionKey } from '../registry/resource-id.js';
import { partitionOf } from './kernel/partitioning.js';
import { Attempt } from './invoker/attempt.js';
import { PromiseQueues } from './invoker/commands/promise-records.js';
import { WAITING, type ActorPorts, type Committed, type InvocationActor } from './kernel/invocation-actor.js';
import { Limiters } from './kernel/limiters.js';
import { ObjectLocks } from './kernel/object-keys.js';
import { ActorCache } from './services/actors.js';
import { Attachments } from './services/attachments.js';
import { Delivery } from './services/delivery.js';
import { Invocations } from './services/invocations.js';
import { LockGrants } from './services/lock-grants.js';
import { SlotGrants } from './services/slot-grants.js';
import { flowRulesOf } from './services/flow-rules.js';
import { operatorActions } from './services/operator.js';
import { recover, recoverPartition, type Recovered, type RecoveryDeps } from './services/recovery.js';
import { observeCommit } from './services/observe.js';
import { RetryScheduler } from './services/retry.js';
import { StateMutations, type StateMutation } from './services/state-mutations.js';
import { fireTimer } from './services/timer-firing.js';
import { TimerService } from './services/timer-arming.js';
import type { CompletedInvocation, InvokeRequest, InvokeResult, Logger, OutputState } from './types.js';

/** A cancel sent by a handler to an invocation that does not exist or has completed is dropped, as in Restate. */
function ignoreMissingOrCompleted(err: unknown): void {
  if (!(err instanceof NotFound) && !(err instanceof Conflict)) throw err;
}

export type { Outcome as OperatorOutcome, DeploymentChoice, RestartOptions, Restarted } from './services/operator.js';

export class Runtime {
  private readonly retry: RetryScheduler;
  private readonly locks: ObjectLocks;
  private readonly limiters: Limiters;
  private readonly slots: SlotGrants;
  private readonly actors: ActorCache;
  private readonly invocations: Invocations;
  private readonly delivery: Delivery;
  private readonly attachments: Attachments;
  private readonly grants: LockGrants;
  private readonly mutations: StateMutations;
  private readonly timers: TimerService;
  /** Operator actions of the admin API (services/operator.ts). */
  readonly operator: ReturnType<typeof operatorActions>;

  constructor(
    readonly store: Store,
    readonly registry: Registry,
    readonly config: Config,
    readonly log: Logger,
    readonly transport = new Transport({ maxMessageBytes: config.requestSizeLimit }),
    /** Writes attempts hold back a moment; `store`'s state reads must settle them (server.ts). */
    private readonly held = new HeldWrites(),
  ) {
    const now = () => Date.now();
    this.retry = new RetryScheduler(log);
    this.locks = new ObjectLocks(store, (partition, err) => this.partitionLost(partition, err));
    this.limiters = new Limiters({
      store,
      now,
      rules: (scope) => flowRulesOf(registry.getExtras().rules, scope),
      granted: (ids, partition, scope, at) => this.slots.granted(ids, partition, scope, at),
      lost: (partition, err) => this.partitionLost(partition, err),
    });
    const ports = this.ports(now);
    this.actors = new ActorCache(store, config.partitions, ports);
    this.slots = new SlotGrants({ store, limiters: this.limiters, actors: this.actors, retry: this.retry, now });
    this.invocations = new Invocations({ registry, actors: this.actors, locks: this.locks, ports, now });
    this.delivery = new Delivery({
      store,
      registry,
      actors: this.actors,
      invocations: this.invocations,
      retry: this.retry,
      cancel: (id) => this.operator.cancel(id).then(() => undefined, ignoreMissingOrCompleted),
    });
    this.attachments = new Attachments({ store, actors: this.actors, invocations: this.invocations, delivery: this.delivery, retry: this.retry });
    this.mutations = new StateMutations({ store, locks: this.locks, partitions: config.partitions, retry: this.retry, granted: (ids) => ids.forEach((id) => this.grants.granted(id)) });
    this.grants = new LockGrants({ store, locks: this.locks, actors: this.actors, retry: this.retry, now, mutations: this.mutations });
    this.timers = new TimerService(store, (p, t) => fireTimer({ store, actors: this.actors, now }, p, t), now, (err) => log.error(`timer: ${String(err)}`));
    this.operator = operatorActions({ store, registry, actors: this.actors, invocations: this.invocations, now });
  }

  /** Creates an invocation durably; resolves once it is committed (services/invocations.ts). */
  invoke(req: InvokeRequest): Promise<InvokeResult> {
    return this.invocations.invoke(req);
  }

  /** The result once the invocation completes; undefined if there is no such invocation. */
  attach(id: string): Promise<CompletedInvocation | undefined> {
    return this.invocations.attach(id);
  }

  output(id: string): Promise<OutputState> {
    return this.invocations.output(id);
  }

  /**
   * Stores a signal (an awakeable's completion) in the target invocation's journal; resolves
   * once it is durable, so the ingress can answer 202 (service-protocol.md §9.6, reference
   * §2.8). A target that does not exist or has completed is ignored, as Restate does.
   */
  async signal(invocationId: string, signalId: number, result: { value: Uint8Array } | { failure: NonNullable<Notification['failure']> }): Promise<void> {
    await this.delivery.notify(invocationId, MessageType.SignalNotification, { signalId, ...result });
  }

  /** Admin `POST /services/{name}/state`: resolves once the mutation is stored. */
  submitStateMutation(m: StateMutation): Promise<void> {
    return this.mutations.submit(m);
  }

  /** The limit rules changed (admin): waiting invocations get what the new rules allow, at once. */
  rulesChanged(): Promise<void> {
    return this.slots.rulesChanged();
  }

  /** Admin `POST /vqueues/{id}/pause|resume`: durable; a queue this server does not know is left alone. */
  setVqueuePaused(vqueueId: string, paused: boolean): Promise<boolean> {
    return this.slots.setPaused(partitionOf(vqueuePartitionKey(vqueueId), this.config.partitions), vqueueId, paused);
  }

  /** At start-up, before serving (services/recovery.ts). */
  recover(): Promise<Recovered> {
    return recover(this.recoveryDeps());
  }

  async stop(): Promise<void> {
    this.timers.stop();
    this.limiters.stop();
    this.retry.stop();
    for (const actor of this.actors.values()) actor.attempt?.abort('server shutting down');
    this.transport.close();
  }

  /** What actors need from the runtime: stores, attempts, and the effects of their commits. */
  private ports(now: () => number): ActorPorts {
    const promises = new PromiseQueues();
    const invoker = {
      store: this.store,
      registry: this.registry,
      transport: this.transport,
      enableProtocolV7: this.config.enableProtocolV7,
      log: this.log,
      promises,
      held: this.held,
      now,
      outcomeOf: (id: string) => this.attachments.outcomeOf(id),
      watchAttach: (callerId: string, completionId: number, targetId: string) => this.attachments.watch(callerId, completionId, targetId),
    };
    return {
      store: this.store,
      locks: this.locks,
      limiters: this.limiters,
      now,
      newAttempt: (actor, context) => new Attempt(invoker, actor, context),
      committed: (actor, done) => this.performCommitted(actor, done),
      requestLock: (actor) => this.grants.request(actor),
      requestSlot: (actor) => this.slots.request(actor),
      lost: (actor, err) => this.lost(actor, err),
    };
  }

  private performCommitted(actor: InvocationActor, done: Committed): void {
    observeCommit(this.log, actor, done);
    this.timers.added(actor.partition, done.timers);
    this.delivery.deliver(actor.partition, done.outbox);
    for (const e of done.effects) {
      if (e.type === 'requestLock') this.grants.request(actor);
      else if (e.type === 'requestSlot') this.slots.request(actor);
      else if (e.type === 'respond') this.invocations.completed(actor);
    }
    for (const id of done.granted) this.grants.granted(id);
    if (WAITING.has(done.to)) this.actors.retire(actor);
  }

  /** A commit's outcome is unknown: drop the actor, and let its partition do what the store says once it answers again. */
  private lost(actor: InvocationActor, err: unknown): void {
    this.actors.remove(actor);
    this.partitionLost(actor.partition, err);
  }

  /**
   * A commit in this partition may or may not have landed (its reply was lost). Whichever it
   * was, the partition's recovery makes the actors do what the store says: reload dropped
   * invocations, start lock holders, re-drive messages, re-arm timers, answer waiters. Tried
   * again, with backoff, until the store answers.
   */
  private partitionLost(partition: number, err: unknown): void {
    this.retry.later(`partition ${partition}: a commit's outcome is unknown, recovering it from the store`, err, async () => {
      await recoverPartition(this.recoveryDeps(), partition);
      await this.invocations.settleWaiters(partition);
    });
  }

  private recoveryDeps(): RecoveryDeps {
    return {
      store: this.store,
      partitions: this.config.partitions,
      actors: this.actors,
      delivery: this.delivery,
      timers: this.timers,
      mutations: this.mutations,
      attachments: this.attachments,
      retry: this.retry,
    };
  }
}
