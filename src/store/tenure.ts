/**
 * The partitions this node holds, and for how long: the one view of tenure that the cluster
 * node keeps (it holds, renews and drops them), the runtime asks (does it own a partition; may
 * an attempt drive the SDK now) and the store enforces (design.md, "Scaling past one machine").
 *
 * Until the first lease is held nothing is fenced (a store used by tests or tools alone); from
 * then on a commit of a partition not held, or held past the time its lease might have run
 * out, is refused here without reaching the store. The store checks the epoch again inside the
 * commit, which is what stops a node that was paused past this check.
 */
import { fencedCommits } from '../telemetry/metrics.js';
import { Fenced, type PartitionTenure } from './types.js';

interface Held {
  epoch: number;
  /** `performance.now()` time after which the lease may have run out. */
  validUntil: number;
}

export class Tenure implements PartitionTenure {
  private readonly held = new Map<number, Held>();
  private active = false;
  private readonly inFlight = new Map<number, { count: number; settled: Array<() => void> }>();

  hold(partition: number, epoch: number, validUntil: number): void {
    this.active = true;
    this.held.set(partition, { epoch, validUntil });
  }

  async drop(partition: number): Promise<void> {
    this.active = true;
    this.held.delete(partition);
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

  /** The epoch a commit of the partition carries now (undefined: unfenced); throws `Fenced` when not held. */
  epochFor(partition: number): number | undefined {
    if (!this.active) return undefined;
    const h = this.held.get(partition);
    if (!h) return this.refuse(partition, 'no lease held');
    if (performance.now() > h.validUntil) return this.refuse(partition, 'its lease was not renewed in time');
    return h.epoch;
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
