/**
 * A partition's life on this node: recovered at start-up or when acquired (src/cluster/),
 * recovered again after one of its commits ended with an unknown outcome, forgotten when it
 * moves to another node. Recovery itself is ./recovery.ts.
 */
import type { InvocationActor } from '../kernel/invocation-actor.js';
import type { Limiters } from '../kernel/limiters.js';
import type { ObjectLocks } from '../kernel/object-keys.js';
import type { Recovered } from '../types.js';
import type { Invocations } from './invocations.js';
import type { StateExpiries } from './state-expiry.js';
import { recover, recoverPartition, type RecoveryDeps } from './recovery.js';

export interface PartitionsDeps extends RecoveryDeps {
  readonly invocations: Invocations;
  readonly locks: ObjectLocks;
  readonly limiters: Limiters;
  readonly expiries: StateExpiries;
}

export class Partitions {
  constructor(private readonly deps: PartitionsDeps) {}

  /** At start-up, before serving. */
  recoverAll(): Promise<Recovered> {
    return recover(this.deps);
  }

  /**
   * This node acquired the partition: its recovery alone, as at start-up. Tried again, with
   * backoff, while the store does not answer.
   */
  async acquire(partition: number): Promise<Recovered> {
    // Whatever was loaded of it while another node owned it (late jobs, reads) may be stale.
    this.forget(partition);
    try {
      return await recoverPartition(this.deps, partition);
    } catch (err) {
      this.lost(partition, err);
      return { resumed: 0, redelivered: 0, mutations: 0, attaches: 0 };
    }
  }

  /**
   * The partition moved to another node (its lease was handed over, lost or not renewed in
   * time; commits there are refused already): its actors, attempts, timers, locks and limiters
   * leave this node without committing anything. Calls waiting here are answered from the store.
   */
  release(partition: number): void {
    this.forget(partition);
    this.deps.invocations.moved(partition);
  }

  /** A commit of this actor has an unknown outcome: it is dropped, and its partition does what the store says once it answers again. */
  actorLost(actor: InvocationActor, err: unknown): void {
    this.deps.actors.remove(actor);
    this.lost(actor.partition, err);
  }

  /**
   * A commit in this partition may or may not have landed (its reply was lost). Whichever it
   * was, the partition's recovery makes the actors do what the store says: reload dropped
   * invocations, start lock holders, re-drive messages, re-arm timers, answer waiters. Tried
   * again, with backoff, until the store answers.
   */
  lost(partition: number, err: unknown): void {
    this.deps.retry.later(
      `partition ${partition}: a commit's outcome is unknown, recovering it from the store`,
      err,
      async () => {
        await recoverPartition(this.deps, partition);
        await this.deps.invocations.settleWaiters(partition);
      },
      partition,
    );
  }

  private forget(partition: number): void {
    this.deps.retry.forgetPartition(partition);
    this.deps.delivery.forgetPartition(partition);
    this.deps.timers.disarm(partition);
    this.deps.actors.dropPartition(partition);
    this.deps.locks.forgetPartition(partition);
    this.deps.limiters.forgetPartition(partition);
    this.deps.expiries.forgetPartition(partition);
  }
}
