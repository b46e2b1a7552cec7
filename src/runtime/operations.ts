/**
 * The runtime's face as one table: every operation that runs on the owner of a partition, what
 * it does there (`LocalOps`), and where it runs (`Operations.at`: here when this node owns the
 * partition, else forwarded once through `Placement.forward`, which calls `serve` on the
 * owner). Whether a forwarded one may be sent again after a lost answer is `FORWARDED_OPS`
 * (types.ts), which the cluster node reads.
 */
import { Misdirected } from '../errors.js';
import type { CompletedInvocation } from '../model/persisted.js';
import type { Notification } from '../protocol/messages.js';
import { Fenced, type OutboxMessage } from '../store/types.js';
import { recordRuntimeOperation } from '../telemetry/metrics.js';
import { forwardable, type Admission } from './services/admission.js';
import type { DeploymentChoice, Outcome, RestartOptions, Restarted } from './services/operator.js';
import type { ScheduleAction } from './services/schedules.js';
import type { StateMutation } from './services/state-mutations.js';
import type { PersistedSchedule } from '../model/schedules.js';
import type { CallResult, ForwardedOp, InvokeResult, OutputState, Placement } from './types.js';

export type SignalResult = { value: Uint8Array } | { failure: NonNullable<Notification['failure']> };

/** The runtime's operations on one partition, as its owner runs them. */
export interface LocalOps {
  create(a: Admission): Promise<InvokeResult>;
  call(a: Admission): Promise<CallResult>;
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
  /** An admin change of a schedule, on the owner of its id's partition (services/schedules.ts). */
  schedule(partition: number, action: ScheduleAction): Promise<PersistedSchedule | undefined>;
}

/** What crosses to the owner: an admission goes without its handler, to be created once (services/admission.ts `forwardable`). */
function travelling(op: ForwardedOp, args: unknown[]): unknown[] {
  return op === 'create' || op === 'call' ? [forwardable(args[0] as Admission)] : args;
}

export class Operations {
  constructor(
    private readonly placement: Placement,
    private readonly local: LocalOps,
  ) {}

  /** An entry into the runtime's face: `run`, counted (`redstate_runtime_operations_total`). */
  at<Op extends ForwardedOp>(partition: number, op: Op, args: Parameters<LocalOps[Op]>): ReturnType<LocalOps[Op]> {
    recordRuntimeOperation(op);
    return this.run(partition, op, args);
  }

  /**
   * Runs `op` on the owner of `partition`: here, or forwarded once. One that the store refused
   * here because the partition moved meanwhile wrote nothing: it goes to the new owner, as one
   * forwarded to this node would (`serve`), instead of failing the client.
   */
  run<Op extends ForwardedOp>(partition: number, op: Op, args: Parameters<LocalOps[Op]>): ReturnType<LocalOps[Op]> {
    const forward = () => this.placement.forward(partition, op, travelling(op, args));
    if (!this.placement.owns(partition)) return forward() as ReturnType<LocalOps[Op]>;
    return (this.local[op] as (...a: unknown[]) => Promise<unknown>)(...args).catch((err: unknown) => {
      if (err instanceof Fenced && err.partition === partition && !this.placement.owns(partition)) return forward();
      throw err;
    }) as ReturnType<LocalOps[Op]>;
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
}
