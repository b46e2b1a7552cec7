/**
 * In-process arming of the durable timers kept in the store.
 *
 * Per partition only the earliest timer is armed (design.md, "Supervisor and timers"); when it
 * fires, every due timer of the partition is read and delivered, then the next one is armed.
 * Deadlines are absolute, so after a restart overdue timers fire at once and the others keep
 * their original deadline.
 */
import type { Store, Timer } from '../../store/types.js';
import { timersArmed } from '../../telemetry/metrics.js';

/** Node's setTimeout cannot wait longer than this. */
const MAX_DELAY = 2 ** 31 - 1;
const BATCH = 256;

export type FireTimer = (partition: number, timer: Timer) => Promise<void>;

export class TimerService {
  private readonly armed = new Map<number, { dueAt: number; handle: NodeJS.Timeout }>();
  private readonly draining = new Set<number>();
  private readonly redrain = new Set<number>();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly fire: FireTimer,
    private readonly now: () => number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Arms the partition's earliest stored timer (at start, and after each drain). */
  async arm(partition: number): Promise<void> {
    const next = await this.store.nextTimer(partition);
    if (next) this.schedule(partition, next.dueAt);
  }

  /** Timers were just committed: arm earlier than what is armed if needed. */
  added(partition: number, timers: Timer[]): void {
    if (timers.length === 0) return;
    const earliest = Math.min(...timers.map((t) => t.dueAt));
    const current = this.armed.get(partition);
    if (this.draining.has(partition)) {
      if (earliest <= this.now()) this.redrain.add(partition);
      else this.schedule(partition, earliest);
    } else if (!current || earliest < current.dueAt) {
      this.schedule(partition, earliest);
    }
  }

  /** The partition moved to another node, which arms its timers now. */
  disarm(partition: number): void {
    const armed = this.armed.get(partition);
    if (!armed) return;
    clearTimeout(armed.handle);
    this.armed.delete(partition);
    timersArmed.set(this.armed.size);
  }

  stop(): void {
    this.stopped = true;
    for (const { handle } of this.armed.values()) clearTimeout(handle);
    this.armed.clear();
    timersArmed.set(0);
  }

  private schedule(partition: number, dueAt: number): void {
    if (this.stopped) return;
    const current = this.armed.get(partition);
    if (current && current.dueAt <= dueAt) return;
    if (current) clearTimeout(current.handle);
    const handle = setTimeout(() => void this.drain(partition), Math.min(MAX_DELAY, Math.max(0, dueAt - this.now())));
    this.armed.set(partition, { dueAt, handle });
    timersArmed.set(this.armed.size);
  }

  private async drain(partition: number): Promise<void> {
    this.armed.delete(partition);
    timersArmed.set(this.armed.size);
    if (this.draining.has(partition)) {
      this.redrain.add(partition);
      return;
    }
    this.draining.add(partition);
    const attempted = new Set<string>();
    try {
      for (;;) {
        this.redrain.delete(partition);
        const due = (await this.store.dueTimers(partition, this.now(), BATCH)).filter((t) => !attempted.has(t.key));
        if (due.length === 0) break;
        for (const t of due) attempted.add(t.key);
        // A timer that fails to fire stays in the store; it is retried on the next arm.
        const results = await Promise.allSettled(due.map((t) => this.fire(partition, t)));
        for (const r of results) if (r.status === 'rejected') this.onError(r.reason);
        if (due.length < BATCH && !this.redrain.has(partition)) break;
      }
    } catch (err) {
      this.onError(err);
    } finally {
      this.draining.delete(partition);
    }
    if (this.stopped) return;
    try {
      const next = await this.store.nextTimer(partition);
      if (next) {
        // Anything still due here failed to fire: back off instead of spinning.
        this.schedule(partition, attempted.has(next.key) ? this.now() + 1000 : next.dueAt);
      }
    } catch (err) {
      this.onError(err);
      this.schedule(partition, this.now() + 1000);
    }
  }
}
