/**
 * The partitions this node holds, and for how long: the one view of tenure that the cluster
 * node keeps (it holds, renews and drops them), the runtime asks (does it own a partition; may
 * an attempt drive the SDK now) and the store enforces (design.md, "Scaling past one machine").
 *
 * Until the first lease is held nothing is fenced (a store used by tests or tools alone); from
 * then on a commit of a partition not held is refused here without reaching the store. One
 * held past the time its lease might have run out waits while the cluster node confirms the
 * lease (cluster-node.ts `confirm`): it goes on if the lease is renewed, and is refused if the
 * partition is dropped. Refused at once, such a commit failed its attempt although nobody else
 * could have taken the partition: a node starved for a second on a loaded machine ran a
 * handler's step again (context-crash.test.ts, 9 of 50 runs with ten stacks at once). The store
 * checks the epoch again inside the commit, which is what stops a node that was paused past
 * this check.
 */
import { fencedCommits } from '../telemetry/metrics.js';
import { Fenced, type PartitionTenure } from './types.js';

/**
 * How long a commit waits for a lapsed lease to be confirmed: the node's watchdog finds the
 * lapse within 100 ms and its renewal is answered, or given up, within 1 s.
 */
const CONFIRMATION_WAIT_MS = 2000;

interface Held {
  epoch: number;
  /** `performance.now()` time after which the lease may have run out. */
  validUntil: number;
}

export class Tenure implements PartitionTenure {
  private readonly held = new Map<number, Held>();
  private active = false;
  private readonly inFlight = new Map<number, { count: number; settled: Array<() => void> }>();
  /** Commits waiting for a lapsed lease to be renewed or dropped, per partition. */
  private readonly confirming = new Map<number, Array<() => void>>();

  hold(partition: number, epoch: number, validUntil: number): void {
    this.active = true;
    this.held.set(partition, { epoch, validUntil });
    this.settleConfirmation(partition);
  }

  async drop(partition: number): Promise<void> {
    this.active = true;
    this.held.delete(partition);
    this.settleConfirmation(partition);
    const busy = this.inFlight.get(partition);
    if (busy) await new Promise<void>((resolve) => busy.settled.push(resolve));
  }

  has(partition: number): boolean {
    return this.held.has(partition);
  }

  holds(partition: number): boolean {
    const h = this.held.get(partition);
    return !this.active || (h !== undefined && performance.now() <= h.validUntil);
  }

  epochOf(partition: number): number | undefined {
    return this.held.get(partition)?.epoch;
  }

  lapsed(now: number): number[] {
    return [...this.held].flatMap(([p, h]) => (now > h.validUntil ? [p] : []));
  }

  partitions(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  /** The epoch a commit of the partition carries (undefined: unfenced); throws `Fenced` when not held. */
  epochFor(partition: number): number | undefined {
    if (!this.active) return undefined;
    return this.held.get(partition)?.epoch ?? this.refuse(partition, 'no lease held');
  }

  /**
   * What a commit of the partition waits for before it is sent: nothing (undefined) while the
   * lease is valid, so that commits keep the order they were asked in; once it has lapsed, its
   * confirmation, which resolves when the lease is renewed at the same epoch and rejects with
   * `Fenced` otherwise.
   */
  confirmation(partition: number): Promise<void> | undefined {
    const h = this.held.get(partition);
    if (!this.active || h === undefined || performance.now() <= h.validUntil) return undefined;
    return this.confirmed(partition, h.epoch);
  }

  private async confirmed(partition: number, epoch: number): Promise<void> {
    const deadline = performance.now() + CONFIRMATION_WAIT_MS;
    for (;;) {
      const h = this.held.get(partition);
      const now = performance.now();
      if (h?.epoch !== epoch || now >= deadline) return this.refuse(partition, 'its lease was not renewed in time');
      if (now <= h.validUntil) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - now);
        let waiting = this.confirming.get(partition);
        if (!waiting) this.confirming.set(partition, (waiting = []));
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private settleConfirmation(partition: number): void {
    const waiting = this.confirming.get(partition);
    if (!waiting) return;
    this.confirming.delete(partition);
    for (const resolve of waiting) resolve();
  }

  /** The store's epoch check refused a commit: `current` is the partition's epoch now. */
  refusedByStore(partition: number, held: number | undefined, current: number): Fenced {
    fencedCommits.inc({ where: 'store' });
    return new Fenced(partition, `it was acquired again since: epoch ${current}, this node holds ${held ?? 'none'}`);
  }

  /** Counts `commit` as in flight for the partition until it settles (`drop` waits for it). */
  async track<T>(partition: number, commit: Promise<T>): Promise<T> {
    let busy = this.inFlight.get(partition);
    if (!busy) this.inFlight.set(partition, (busy = { count: 0, settled: [] }));
    busy.count++;
    try {
      return await commit;
    } finally {
      if (--busy.count === 0) {
        this.inFlight.delete(partition);
        for (const resolve of busy.settled) resolve();
      }
    }
  }

  private refuse(partition: number, reason: string): never {
    fencedCommits.inc({ where: 'node' });
    throw new Fenced(partition, reason);
  }
}
