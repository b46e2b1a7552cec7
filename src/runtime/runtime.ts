/**
 * The runtime's composition root and its face towards the ingress, the admin API, the
 * subscriptions and the other nodes. Wiring only: it builds the parts, gives each the narrow
 * interface it needs, and sends each face method to where it is done.
 *
 * The parts: the kernel (kernel/: actors that commit, then perform), the invoker (invoker/:
 * attempts towards deployments) and the services (services/: admission, creating invocations,
 * what a commit's effects do, delivery, timers, locks and slots, operator actions, a
 * partition's recovery). Operations that run on a partition's owner go through one table
 * (operations.ts). Imports point downwards: runtime.ts → operations.ts → services → invoker → kernel.
 */
import type { Config } from '../config.js';
import { Conflict, NotFound } from '../errors.js';
import { RecordKind, type CompletedInvocation } from '../model/persisted.js';
import { readSchedule, readSchedules, schedulePartition, type PersistedSchedule } from '../model/schedules.js';
import { partitionOf, partitionOfId, partitionOfTarget } from '../model/partitioning.js';
import { MessageType } from '../protocol/messages.js';
import { Transport } from '../protocol/transport.js';
import type { Registry } from '../registry/registry.js';
import { vqueuePartitionKey } from '../registry/resource-id.js';
import type { EffectiveHandler } from '../registry/types.js';
import { HeldWrites } from '../store/held-writes.js';
import type { Store } from '../store/types.js';
import { Attempt } from './invoker/attempt.js';
import { StartGate } from './invoker/start-gate.js';
import { PromiseQueues } from './invoker/commands/promise-records.js';
import type { ActorPorts } from './kernel/invocation-actor.js';
import { Limiters } from './kernel/limiters.js';
import { ObjectLocks } from './kernel/object-keys.js';
import { Operations, type LocalOps, type SignalResult } from './operations.js';
import { ActorCache } from './services/actors.js';
import { admit, type AdmissionDeps } from './services/admission.js';
import { performCommitted, type AfterCommitDeps } from './services/after-commit.js';
import { Attachments } from './services/attachments.js';
import { ConfirmedWrites } from './services/confirmed-writes.js';
import { Delivery } from './services/delivery.js';
import { flowRulesOf } from './services/flow-rules.js';
import { Invocations } from './services/invocations.js';
import { LockGrants } from './services/lock-grants.js';
import {
  operatorActions,
  restartedId,
  type DeploymentChoice,
  type Outcome,
  type RestartOptions,
  type Restarted,
} from './services/operator.js';
import { Partitions } from './services/partitions.js';
import { RetryScheduler } from './services/retry.js';
import { SlotGrants } from './services/slot-grants.js';
import { StateExpiries } from './services/state-expiry.js';
import { Schedules, type ScheduleAction } from './services/schedules.js';
import { StateMutations, type StateMutation } from './services/state-mutations.js';
import { TimerService } from './services/timer-arming.js';
import { fireTimer } from './services/timer-firing.js';
import {
  everyPartition,
  SUBSCRIPTIONS_PARTITION,
  type CallResult,
  type ForwardedOp,
  type InvokeRequest,
  type InvokeResult,
  type Logger,
  type OutputState,
  type Placement,
  type Recovered,
} from './types.js';

export type { Outcome as OperatorOutcome, DeploymentChoice, RestartOptions, Restarted } from './services/operator.js';
export type { ScheduleAction, ScheduleDefinition } from './services/schedules.js';

/**
 * A cancel sent by a handler to an invocation that does not exist or has completed is dropped,
 * as in Restate; so is the kill of a killed invocation's callee that ended meanwhile.
 */
function ignoreMissingOrCompleted(err: unknown): void {
  if (!(err instanceof NotFound) && !(err instanceof Conflict)) throw err;
}

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
  private readonly expiries: StateExpiries;
  private readonly scheduling: Schedules;
  private readonly partitionsHere: Partitions;
  private readonly afterCommit: AfterCommitDeps;
  private readonly admission: AdmissionDeps;
  private readonly ops: Operations;
  /** The face's writes, settled after a store outage before anyone is answered. */
  private readonly confirmed: ConfirmedWrites;
  /** Bounds the attempts starting at once while invocations are being admitted. */
  private readonly starts: StartGate;
  /** Where this node's subscription progress comes from (server.ts: the subscription engine). */
  private progressHere: () => Promise<unknown[]> = () => Promise.resolve([]);

  constructor(
    readonly store: Store,
    readonly registry: Registry,
    readonly config: Config,
    readonly log: Logger,
    readonly transport = new Transport({ maxMessageBytes: config.requestSizeLimit }),
    /** Which partitions this node owns; all of them unless several nodes share the store. */
    placement: Placement = everyPartition(config.partitions),
    /** Writes attempts hold back a moment; `store`'s state reads must settle them (server.ts). */
    private readonly held = new HeldWrites(),
  ) {
    const now = () => Date.now();
    this.starts = new StartGate(config.startingAttempts);
    this.retry = new RetryScheduler(log, (p) => placement.owns(p));
    const partitionLost = (partition: number, err: unknown) => this.partitionsHere.lost(partition, err);
    this.locks = new ObjectLocks(store, partitionLost, (p, service, key, scope) =>
      this.expiries.freed(p, service, key, scope),
    );
    this.limiters = new Limiters({
      store,
      now,
      rules: (scope) => flowRulesOf(registry.getExtras().rules, scope),
      granted: (ids, partition, scope, at) => this.slots.granted(ids, partition, scope, at),
      lost: partitionLost,
    });
    const ports = this.ports(now);
    this.actors = new ActorCache(store, config.partitions, ports);
    this.slots = new SlotGrants({ store, limiters: this.limiters, actors: this.actors, retry: this.retry, now });
    this.admission = { registry, placement, partitions: config.partitions, now };
    const admitted = (req: InvokeRequest, handler?: EffectiveHandler) => admit(this.admission, req, handler);
    this.invocations = new Invocations({
      admissions: this.starts,
      actors: this.actors,
      locks: this.locks,
      ports,
      placement,
      backlog: this.slots,
    });
    const operator = operatorActions({
      store,
      registry,
      actors: this.actors,
      invocations: this.invocations,
      admit: admitted,
      killCallee: (id) =>
        this.ops.run(this.partitionOf(id), 'operator.kill', [id]).then(() => undefined, ignoreMissingOrCompleted),
      now,
    });
    this.delivery = new Delivery({
      store,
      registry,
      actors: this.actors,
      invocations: this.invocations,
      retry: this.retry,
      placement,
      onOwner: (target, op, message) => this.ops.run(target, op, [message]),
      admit: admitted,
      cancel: (id) => operator.cancel(id).then(() => undefined, ignoreMissingOrCompleted),
    });
    this.attachments = new Attachments({
      store,
      actors: this.actors,
      attach: (id) => this.ops.run(this.partitionOf(id), 'attach', [id]),
      delivery: this.delivery,
      retry: this.retry,
    });
    this.expiries = new StateExpiries({
      store,
      locks: this.locks,
      registry,
      armed: (p, timers) => this.timers.added(p, timers),
      now,
      log: (err) => log.error(`state expiry: ${String(err)}`),
    });
    this.mutations = new StateMutations({
      store,
      locks: this.locks,
      partitions: config.partitions,
      retry: this.retry,
      granted: (ids) => ids.forEach((id) => this.grants.granted(id)),
      expiries: this.expiries,
      armed: (p, timers) => this.timers.added(p, timers),
    });
    this.grants = new LockGrants({
      store,
      locks: this.locks,
      actors: this.actors,
      retry: this.retry,
      now,
      mutations: this.mutations,
    });
    this.scheduling = new Schedules({
      store,
      registry,
      invoke: (req, handler) => this.invoke(req, handler),
      output: (id) => this.output(id),
      armed: (p, timers) => this.timers.added(p, timers),
      now,
    });
    const firing = {
      store,
      actors: this.actors,
      now,
      expireState: (p: number, lock: string) => this.expiries.fire(p, lock),
      fireSchedule: (p: number, id: string) => this.scheduling.fire(p, id),
    };
    this.timers = new TimerService(
      store,
      (p, t) => fireTimer(firing, p, t),
      now,
      (err) => log.error(`timer: ${String(err)}`),
    );
    this.partitionsHere = new Partitions({
      store,
      partitions: config.partitions,
      actors: this.actors,
      delivery: this.delivery,
      timers: this.timers,
      mutations: this.mutations,
      attachments: this.attachments,
      retry: this.retry,
      invocations: this.invocations,
      locks: this.locks,
      limiters: this.limiters,
      expiries: this.expiries,
    });
    this.afterCommit = {
      log,
      timers: this.timers,
      delivery: this.delivery,
      grants: this.grants,
      slots: this.slots,
      invocations: this.invocations,
      actors: this.actors,
    };
    const local: LocalOps = {
      create: (a) => this.invocations.create(a),
      call: (a) => this.invocations.call(a),
      attach: (id) => this.invocations.attach(id),
      output: (id) => this.invocations.output(id),
      signal: async (id, signalId, result) => {
        await this.delivery.notify(id, MessageType.SignalNotification, { signalId, ...result });
      },
      submitStateMutation: (m) => this.mutations.submit(m),
      setVqueuePaused: (partition, vqueueId, paused) => this.slots.setPaused(partition, vqueueId, paused),
      deliver: (m) => this.delivery.here('deliver', m),
      forget: (m) => this.delivery.here('forget', m),
      'operator.cancel': operator.cancel,
      'operator.kill': operator.kill,
      'operator.pause': operator.pause,
      'operator.resume': operator.resume,
      'operator.purge': operator.purge,
      'operator.purgeJournal': operator.purgeJournal,
      'operator.restartAsNew': operator.restartAsNew,
      subscriptionProgress: () => this.progressHere(),
      schedule: (partition, action) => this.scheduling.change(partition, action),
    };
    this.ops = new Operations(placement, local);
    this.confirmed = new ConfirmedWrites({
      wait: { store, boundMs: config.storeOutageWait },
      store,
      actors: this.actors,
    });
  }

  /**
   * Creates an invocation durably; resolves once it is committed. The request is admitted here
   * (services/admission.ts: its id, partition, handler...); `handler` is the one the caller
   * resolved already, if it did.
   */
  invoke(req: InvokeRequest, handler?: EffectiveHandler): Promise<InvokeResult> {
    const a = admit(this.admission, req, handler);
    return this.confirmed.create(a, (x) => this.ops.at(a.partition, 'create', [x]));
  }

  /** Creates an invocation and waits for its outcome, in one operation on the partition's owner. */
  call(req: InvokeRequest, handler?: EffectiveHandler): Promise<CallResult> {
    const a = admit(this.admission, req, handler);
    return this.confirmed.create(a, (x) => this.ops.at(a.partition, 'call', [x]));
  }

  /** The result once the invocation completes; undefined if there is no such invocation. */
  attach(id: string): Promise<CompletedInvocation | undefined> {
    return this.confirmed.repeatable(() => this.ops.at(this.partitionOf(id), 'attach', [id]));
  }

  output(id: string): Promise<OutputState> {
    return this.ops.at(this.partitionOf(id), 'output', [id]);
  }

  /**
   * Stores a signal (an awakeable's completion) in the target invocation's journal; resolves
   * once it is durable, so the ingress can answer 202 (service-protocol.md §9.6, reference
   * §2.8). A target that does not exist or has completed is ignored, as Restate does.
   */
  signal(invocationId: string, signalId: number, result: SignalResult): Promise<void> {
    // Delivered again, a signal already in the journal is not appended twice (services/delivery.ts).
    return this.confirmed.repeatable(() =>
      this.ops.at(this.partitionOf(invocationId), 'signal', [invocationId, signalId, result]),
    );
  }

  /** Operator actions of the admin API (services/operator.ts), run on the invocation's owner. */
  readonly operator = {
    cancel: (id: string): Promise<Outcome> =>
      this.confirmed.operator(id, 'cancel', () => this.ops.at(this.partitionOf(id), 'operator.cancel', [id])),
    kill: (id: string): Promise<Outcome> =>
      this.confirmed.operator(id, 'kill', () => this.ops.at(this.partitionOf(id), 'operator.kill', [id])),
    pause: (id: string): Promise<Outcome> =>
      this.confirmed.operator(id, 'pause', () => this.ops.at(this.partitionOf(id), 'operator.pause', [id])),
    // Applied again, a resume that landed finds nothing left to do.
    resume: (id: string, deployment?: DeploymentChoice): Promise<Outcome> =>
      this.confirmed.repeatable(() => this.ops.at(this.partitionOf(id), 'operator.resume', [id, deployment])),
    purge: (id: string): Promise<Outcome> =>
      this.confirmed.operator(id, 'purge', () => this.ops.at(this.partitionOf(id), 'operator.purge', [id])),
    // Applied again, a purge of the journal finds the snapshot it wrote and writes it again.
    purgeJournal: (id: string): Promise<Outcome> =>
      this.confirmed.repeatable(() => this.ops.at(this.partitionOf(id), 'operator.purgeJournal', [id])),
    // The new id is chosen once, here: a try again after a lost answer finds what an earlier try made.
    restartAsNew: (id: string, opts: RestartOptions = {}): Promise<Restarted> => {
      const fixed = { ...opts, newInvocationId: opts.newInvocationId ?? restartedId(id) };
      return this.confirmed.repeatable(() => this.ops.at(this.partitionOf(id), 'operator.restartAsNew', [id, fixed]));
    },
  };

  /** Admin `POST /services/{name}/state`: resolves once the mutation is stored (by the key's owner). */
  submitStateMutation(m: StateMutation): Promise<void> {
    // Applied twice, a whole state replaced leaves what applied once does.
    return this.confirmed.repeatable(() =>
      this.ops.at(partitionOfTarget(m, this.config.partitions), 'submitStateMutation', [m]),
    );
  }

  /** The limit rules changed (admin): waiting invocations get what the new rules allow, at once. */
  rulesChanged(): Promise<void> {
    return this.slots.rulesChanged();
  }

  /** Admin `POST /vqueues/{id}/pause|resume`: durable; a queue this server does not know is left alone. */
  setVqueuePaused(vqueueId: string, paused: boolean): Promise<boolean> {
    const partition = partitionOf(vqueuePartitionKey(vqueueId), this.config.partitions);
    return this.ops.at(partition, 'setVqueuePaused', [partition, vqueueId, paused]);
  }

  /** Admin changes of a schedule (services/schedules.ts), on the owner of its partition; the schedule after it. */
  changeSchedule(action: ScheduleAction): Promise<PersistedSchedule | undefined> {
    const partition = schedulePartition(
      action.type === 'create' ? action.definition.id : action.id,
      this.config.partitions,
    );
    return this.ops.at(partition, 'schedule', [partition, action]);
  }

  /** A schedule as stored, read from any node. */
  async schedule(id: string): Promise<PersistedSchedule | undefined> {
    return readSchedule(
      await this.store.getRecord(schedulePartition(id, this.config.partitions), RecordKind.schedule, id),
    );
  }

  /** Every schedule, by id. */
  schedules(): Promise<PersistedSchedule[]> {
    return readSchedules(this.store, this.config.partitions);
  }

  reportSubscriptionProgress(source: () => Promise<unknown[]>): void {
    this.progressHere = source;
  }

  /** The subscriptions' progress as the node that consumes them reports it, from any node. */
  subscriptionProgress(): Promise<unknown[]> {
    return this.ops.at(SUBSCRIPTIONS_PARTITION, 'subscriptionProgress', []);
  }

  /** An operation another node forwarded here (operations.ts `serve`). */
  serve(partition: number, op: ForwardedOp, args: unknown[]): Promise<unknown> {
    return this.ops.serve(partition, op, args);
  }

  /** At start-up, before serving (services/recovery.ts). */
  recover(): Promise<Recovered> {
    return this.partitionsHere.recoverAll();
  }

  /** This node acquired the partition (src/cluster/): services/partitions.ts. */
  acquirePartition(partition: number): Promise<Recovered> {
    return this.partitionsHere.acquire(partition);
  }

  /** The partition moved to another node: services/partitions.ts. */
  releasePartition(partition: number): void {
    this.partitionsHere.release(partition);
  }

  async stop(): Promise<void> {
    this.timers.stop();
    this.limiters.stop();
    this.retry.stop();
    for (const actor of this.actors.values()) actor.attempt?.abort('server shutting down');
    this.transport.close();
  }

  private partitionOf(id: string): number {
    return partitionOfId(id, this.config.partitions);
  }

  /** What actors need from the runtime: stores, attempts, and what their commits' effects do. */
  private ports(now: () => number): ActorPorts {
    const invoker = {
      store: this.store,
      registry: this.registry,
      transport: this.transport,
      enableProtocolV7: this.config.enableProtocolV7,
      log: this.log,
      promises: new PromiseQueues(),
      held: this.held,
      starts: this.starts,
      now,
      outcomeOf: (id: string) => this.attachments.outcomeOf(id),
      watchAttach: (callerId: string, completionId: number, targetId: string) =>
        this.attachments.watch(callerId, completionId, targetId),
    };
    return {
      store: this.store,
      locks: this.locks,
      limiters: this.limiters,
      now,
      newAttempt: (actor, context) => new Attempt(invoker, actor, context),
      committed: (actor, done) => performCommitted(this.afterCommit, actor, done),
      requestLock: (actor) => this.grants.request(actor),
      requestSlot: (actor) => this.slots.request(actor),
      lost: (actor, err) => this.partitionsHere.actorLost(actor, err),
    };
  }
}
