/**
 * While new invocations are being admitted, how many attempts may be starting at once: from
 * opening their stream until the deployment's first frames, their end, or 100 ms after Start
 * (invoker/attempt.ts `START_SLOT_MS`). The rest wait here, first come first served, with their
 * stream not yet opened; once no admission was in flight for QUIET_MS, all of them start.
 *
 * Without a bound, a burst of sends started one attempt per admitted send at once: thousands
 * of HTTP/2 streams opening and handlers running beside the admissions on the same thread,
 * so every 202 waited behind execution (bench S8, embedded, paired runs: 2132-2196 sends/s
 * acknowledged; with this gate 2898-3110/s, the last of them done at most 0.15 s later).
 * Bounded always (3361-3855/s), the wake-ups after a restart (5,000 sleepers due at once,
 * nothing being admitted) ran through 32 slots, each held for two turns of a saturated event
 * loop, and finished 2.7-3.0 s after the last was due instead of 0.4 s: with nothing to admit,
 * holding execution back gains nothing.
 *
 * The bound is on starting, not on running: an attempt that answered holds no slot while it
 * waits (for a call, a sleep, an awakeable), so no invocation can wait for a slot held by one
 * that waits for it.
 */
import { attemptsWaitingToStart } from '../../telemetry/metrics.js';

/**
 * How long after the last admission ended starts stay bounded. A group commit ends every
 * admission in flight at once, and the clients' next requests arrive a turn later: counted to
 * the moment, a burst of sends let the whole backlog go after every group commit (S8: 2304-2662
 * sends/s acknowledged instead of 3361-3855 with the bound kept).
 */
const QUIET_MS = 25;

export class StartGate {
  private starting = 0;
  private readonly waiting: Array<() => boolean> = [];
  /** Admissions in flight (`admitting`). */
  private admissions = 0;
  /** Admissions are in flight, or the last ended less than QUIET_MS ago. */
  private admittingLately = false;
  private quietTimer: NodeJS.Timeout | undefined;

  constructor(private readonly limit: number) {}

  /** Runs `work`, the admission of new invocations: while any runs, and QUIET_MS after, starts are bounded. */
  async admitting<T>(work: () => Promise<T>): Promise<T> {
    this.admissions++;
    this.admittingLately = true;
    clearTimeout(this.quietTimer);
    try {
      return await work();
    } finally {
      if (--this.admissions === 0) this.quietTimer = setTimeout(() => this.quiet(), QUIET_MS).unref();
    }
  }

  private quiet(): void {
    this.admittingLately = false;
    this.grant();
  }

  /** Takes a slot if one is free and nobody waits for one. */
  tryTake(): boolean {
    if (this.starting >= this.bound || this.waiting.length > 0) return false;
    this.starting++;
    return true;
  }

  private get bound(): number {
    return this.admittingLately ? this.limit : Infinity;
  }

  /**
   * `go` runs once a slot is taken for it, in the order asked; it answers false when its
   * attempt no longer wants the slot (it ended while waiting), which then goes to the next.
   */
  wait(go: () => boolean): void {
    this.waiting.push(go);
    this.grant();
  }

  release(): void {
    this.starting--;
    this.grant();
  }

  private grant(): void {
    while (this.starting < this.bound && this.waiting.length > 0) {
      const go = this.waiting.shift()!;
      this.starting++;
      if (!go()) this.starting--;
    }
    attemptsWaitingToStart.set(this.waiting.length);
  }
}
