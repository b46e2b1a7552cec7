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
import { Conflict, Misdirected, NotFound } from '../errors.js';
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
import {
  everyPartition,
  type CompletedInvocation,
  type ForwardedOp,
  type InvokeRequest,
  type InvokeResult,
  type Logger,
  type OutputState,
  type Placement,
  SUBSCRIPTIONS_PARTITION,
} from './types.js';
import { Fenced, type OutboxMessage } from '../store/types.js';
import { partitionKeyOf } from '../protocol/ids.js';
import type { DeploymentChoice, Outcome, RestartOptions, Restarted } from './services/operator.js';

type Operator = ReturnType<typeof operatorActions>;
type SignalResult = { value: Uint8Array } | { failure: NonNullable<Notification['failure']> };

/** The runtime's operations on one partition, as `serve` runs them for the partition's owner. */
interface LocalOps {
  invoke(req: InvokeRequest): Promise<InvokeResult>;
  attach(id: string): Promise<CompletedInvocation | undefined>;
  output(id: string): Promise<OutputState>;
  signal(id: string, signalId: number, result: SignalResult): Promise<void>;
  submitStateMutation(m: StateMutation): Promise<void>;
  setVqueuePaused(partition: number, vqueueId: string, paused: boolean): Promise<boolean>;
  deliver(message: OutboxMessage): Promise<void>;
  forget(message: OutboxMessage): Promise<void>;
  'operator.cancel'(id: string): Promise<Outcome>;
  'operator.kill'(id: string): Promise<Outcome>;
  'operator.pause'(id: string): Promise<Outcome>;
  'operator.resume'(id: string, deployment?: DeploymentChoice): Promise<Outcome>;
  'operator.purge'(id: string): Promise<Outcome>;
  'operator.purgeJournal'(id: string): Promise<Outcome>;
  'operator.restartAsNew'(id: string, opts?: RestartOptions): Promise<Restarted>;
  /** What this node's subscription consumers report (rows of `sys_subscription_progress`). */
  subscriptionProgress(): Promise<unknown[]>;
}

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
  /** Operator actions of the admin API (services/operator.ts), run on the invocation's owner. */
  readonly operator: Operator;
  /** The same, here: for invocations of partitions this node owns. */
  private readonly localOperator: Operator;

  constructor(
    readonly store: Store,
    readonly registry: Registry,
    readonly config: Config,
    readonly log: Logger,
    readonly transport = new Transport({ maxMessageBytes: config.requestSizeLimit }),
    /** Which partitions this node owns; all of them unless several nodes share the store. */
    private readonly placement: Placement = everyPartition(config.partitions),
    /** Writes attempts hold back a moment; `store`'s state reads must settle them (server.ts). */
    private readonly held = new HeldWrites(),
  ) {
    const now = () => Date.now();
    this.retry = new RetryScheduler(log, (p) => placement.owns(p));
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
    this.invocations = new Invocations({ registry, actors: this.actors, locks: this.locks, ports, now, placement, partitions: config.partitions });
    this.delivery = new Delivery({
      store,
      registry,
      actors: this.actors,
      invocations: this.invocations,
      retry: this.retry,
      placement,
      cancel: (id) => this.localOperator.cancel(id).then(() => undefined, ignoreMissingOrCompleted),
    });
    this.attachments = new Attachments({ store, actors: this.actors, invocations: this.invocations, delivery: this.delivery, retry: this.retry });
    this.mutations = new StateMutations({ store, locks: this.locks, partitions: config.partitions, retry: this.retry, granted: (ids) => ids.forEach((id) => this.grants.granted(id)) });
    this.grants = new LockGrants({ store, locks: this.locks, actors: this.actors, retry: this.retry, now, mutations: this.mutations });
    this.timers = new TimerService(store, (p, t) => fireTimer({ store, actors: this.actors, now }, p, t), now, (err) => log.error(`timer: ${String(err)}`));
    this.localOperator = operatorActions({ store, registry, actors: this.actors, invocations: this.invocations, now });
    const owner = (name: keyof Operator) => (id: string, ...rest: unknown[]) =>
      this.placement.owns(this.actors.partitionOf(id))
        ? (this.localOperator[name] as (...a: unknown[]) => Promise<unknown>)(id, ...rest)
        : this.placement.forward(this.actors.partitionOf(id), `operator.${name}`, [id, ...rest]);
    this.operator = Object.fromEntries(Object.keys(this.localOperator).map((name) => [name, owner(name as keyof Operator)])) as Operator;
  }

  /**
   * Creates an invocation durably; resolves once it is committed (services/invocations.ts).
   * One whose partition another node owns is created there, with an id chosen here, so that
   * sending it again after a lost answer cannot create it twice.
   */
  invoke(req: InvokeRequest): Promise<InvokeResult> {
    const placed = this.invocations.placementOf(req);
    if (!placed || this.placement.owns(placed.partition)) return this.invocations.invoke(req);
    return this.at(placed.partition, 'invoke', [{ ...req, invocationId: placed.id, createOnce: true }]);
  }

  /** The result once the invocation completes; undefined if there is no such invocation. */
  attach(id: string): Promise<CompletedInvocation | undefined> {
    return this.at(this.actors.partitionOf(id), 'attach', [id]);
  }

  output(id: string): Promise<OutputState> {
    return this.at(this.actors.partitionOf(id), 'output', [id]);
  }

  /**
   * Runs an operation here when this node owns the partition, else on its owner
   * (`Placement.forward`, which calls `serve` there).
   */
  private at<Op extends ForwardedOp>(partition: number, op: Op, args: Parameters<LocalOps[Op]>): ReturnType<LocalOps[Op]> {
    if (this.placement.owns(partition)) return (this.local[op] as (...a: unknown[]) => ReturnType<LocalOps[Op]>)(...args);
    return this.placement.forward(partition, op, args) as ReturnType<LocalOps[Op]>;
  }

  /**
   * An operation another node forwarded here (src/cluster/). What this node does not own (any
   * more) is refused with `Misdirected`, and the sender asks the owner it finds next.
   */
  serve(partition: number, op: ForwardedOp, args: unknown[]): Promise<unknown> {
    if (!this.placement.owns(partition)) return Promise.reject(new Misdirected(partition));
    // Refused by the store because the partition moved meanwhile: nothing was written, and the
    // next owner can be asked.
    return (this.local[op] as (...a: unknown[]) => Promise<unknown>)(...args).catch((err: unknown) => {
      throw err instanceof Fenced && err.partition === partition ? new Misdirected(partition) : err;
    });
  }

  /** Every operation a node may forward, done here. */
  private readonly local: LocalOps = {
    invoke: (req) => this.invocations.invoke(req),
    attach: (id) => this.invocations.attach(id),
    output: (id) => this.invocations.output(id),
    signal: async (id, signalId, result) => {
      await this.delivery.notify(id, MessageType.SignalNotification, { signalId, ...result });
    },
    submitStateMutation: (m) => this.mutations.submit(m),
    setVqueuePaused: (partition, vqueueId, paused) => this.slots.setPaused(partition, vqueueId, paused),
    deliver: (m) => this.delivery.here('deliver', m),
    forget: (m) => this.delivery.here('forget', m),
    'operator.cancel': (id) => this.localOperator.cancel(id),
    'operator.kill': (id) => this.localOperator.kill(id),
    'operator.pause': (id) => this.localOperator.pause(id),
    'operator.resume': (id, deployment) => this.localOperator.resume(id, deployment),
    'operator.purge': (id) => this.localOperator.purge(id),
    'operator.purgeJournal': (id) => this.localOperator.purgeJournal(id),
    'operator.restartAsNew': (id, opts) => this.localOperator.restartAsNew(id, opts),
    subscriptionProgress: () => this.progressHere(),
  };

  /** Where this node's subscription progress comes from (server.ts: the subscription engine). */
  private progressHere: () => Promise<unknown[]> = () => Promise.resolve([]);

  reportSubscriptionProgress(source: () => Promise<unknown[]>): void {
    this.progressHere = source;
  }

  /** The subscriptions' progress as the node that consumes them reports it, from any node. */
  subscriptionProgress(): Promise<unknown[]> {
    return this.at(SUBSCRIPTIONS_PARTITION, 'subscriptionProgress', []);
  }

  /**
   * Stores a signal (an awakeable's completion) in the target invocation's journal; resolves
   * once it is durable, so the ingress can answer 202 (service-protocol.md §9.6, reference
   * §2.8). A target that does not exist or has completed is ignored, as Restate does.
   */
  signal(invocationId: string, signalId: number, result: SignalResult): Promise<void> {
    return this.at(this.actors.partitionOf(invocationId), 'signal', [invocationId, signalId, result]);
  }

  /** Admin `POST /services/{name}/state`: resolves once the mutation is stored (by the key's owner). */
  submitStateMutation(m: StateMutation): Promise<void> {
    return this.at(partitionOf(partitionKeyOf(m.scope ?? m.key), this.config.partitions), 'submitStateMutation', [m]);
  }

  /** The limit rules changed (admin): waiting invocations get what the new rules allow, at once. */
  rulesChanged(): Promise<void> {
    return this.slots.rulesChanged();
  }

  /** Admin `POST /vqueues/{id}/pause|resume`: durable; a queue this server does not know is left alone. */
  setVqueuePaused(vqueueId: string, paused: boolean): Promise<boolean> {
    const partition = partitionOf(vqueuePartitionKey(vqueueId), this.config.partitions);
    return this.at(partition, 'setVqueuePaused', [partition, vqueueId, paused]);
  }

  /** At start-up, before serving (services/recovery.ts). */
  recover(): Promise<Recovered> {
    return recover(this.recoveryDeps());
  }

  /**
   * This node acquired the partition (src/cluster/): its recovery alone, as at start-up.
   * Tried again, with backoff, while the store does not answer.
   */
  async acquirePartition(partition: number): Promise<Recovered> {
    // Whatever was loaded of it while another node owned it (late jobs, reads) may be stale.
    this.forgetPartition(partition);
    try {
      return await recoverPartition(this.recoveryDeps(), partition);
    } catch (err) {
      this.partitionLost(partition, err);
      return { resumed: 0, redelivered: 0, mutations: 0, attaches: 0 };
    }
  }

  /**
   * The partition moved to another node (its lease was handed over, lost or not renewed in
   * time; commits there are refused already): its actors, attempts, timers, locks and limiters
   * leave this node without committing anything. Calls waiting here are answered from the store.
   */
  releasePartition(partition: number): void {
    this.forgetPartition(partition);
    this.invocations.moved(partition);
  }

  private forgetPartition(partition: number): void {
    this.retry.forgetPartition(partition);
    this.timers.disarm(partition);
    this.actors.dropPartition(partition);
    this.locks.forgetPartition(partition);
    this.limiters.forgetPartition(partition);
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
    this.retry.later(
      `partition ${partition}: a commit's outcome is unknown, recovering it from the store`,
      err,
      async () => {
        await recoverPartition(this.recoveryDeps(), partition);
        await this.invocations.settleWaiters(partition);
      },
      partition,
    );
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
