/**
 * One place for "try again later": work that failed (the store unreachable, a lost commit, a
 * delivery that could not be stored) is run again after a delay that grows per key, until it
 * succeeds or the runtime stops. `stop()` cancels everything still waiting.
 */
import { Fenced } from '../../store/types.js';
import type { Logger } from '../types.js';

const FIRST_DELAY = 100;
const MAX_DELAY = 5_000;

interface Waiting {
  timer: NodeJS.Timeout | undefined;
  job: () => Promise<void>;
  failures: number;
  /** The partition whose work this is: dropped when the partition leaves this node. */
  partition: number | undefined;
}

export class RetryScheduler {
  private readonly waiting = new Map<string, Waiting>();
  private stopped = false;

  /** @param owns whether this node still owns a partition: work refused as `Fenced` elsewhere is dropped */
  constructor(
    private readonly log: Logger,
    private readonly owns: (partition: number) => boolean = () => true,
  ) {}

  /**
   * `job` failed with `err` for `key` (e.g. `resume:inv_…`): run it again later. A key already
   * waiting keeps its turn and takes the newest job. The job's own failure schedules the next
   * try, with a longer delay. Work of a `partition` is dropped once this node does not own it.
   */
  later(key: string, err: unknown, job: () => Promise<void>, partition?: number): void {
    if (this.stopped) return;
    // The partition moved to another node: its work is the owner's now (its recovery redoes it).
    // Still owned (its lease is being confirmed after a stall): tried again like any failure.
    if ((err instanceof Fenced && !this.owns(err.partition)) || (partition !== undefined && !this.owns(partition))) {
      this.drop(key);
      return;
    }
    const w = this.waiting.get(key);
    if (w) {
      w.job = job;
      if (w.timer) return;
    }
    const entry = w ?? { timer: undefined, job, failures: 0, partition };
    entry.failures++;
    this.waiting.set(key, entry);
    const delay = Math.min(FIRST_DELAY * 2 ** (entry.failures - 1), MAX_DELAY);
    // One line when a key starts failing, one when it recovers: an outage of the store makes
    // every key fail again and again.
    if (entry.failures === 1)
      this.log.warn(`${key}: ${err instanceof Error ? err.message : String(err)}; trying again with backoff`);
    entry.timer = setTimeout(() => void this.again(key, entry), delay);
    entry.timer.unref();
  }

  private drop(key: string): void {
    clearTimeout(this.waiting.get(key)?.timer);
    this.waiting.delete(key);
  }

  /**
   * The partition left this node, or was acquired again (whose recovery redoes all of it): its
   * waiting work goes. Run later, it would load and drive invocations beside the recovery's.
   */
  forgetPartition(partition: number): void {
    for (const [key, w] of this.waiting) if (w.partition === partition) this.drop(key);
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
  }

  private async again(key: string, entry: Waiting): Promise<void> {
    entry.timer = undefined;
    try {
      await entry.job();
      if (this.waiting.get(key) === entry && !entry.timer) {
        this.waiting.delete(key);
        if (entry.failures > 1) this.log.info(`${key}: done after ${entry.failures} tries`);
      }
    } catch (err) {
      // Dropped while it ran (its partition left or was acquired again): it is not tried again.
      if (this.waiting.get(key) === entry) this.later(key, err, entry.job, entry.partition);
    }
  }
}
