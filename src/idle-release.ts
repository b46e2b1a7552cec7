/**
 * Gives memory back to the system once the server goes quiet after load.
 *
 * V8 keeps the heap it grew to under load and shrinks it only slowly, if at all: after 20,000
 * suspended invocations had completed, the server held 305 MiB of RSS against 90 MiB idle while
 * its live heap was small (a heap snapshot after a full collection: 25 MB). A full collection
 * once the event loop is idle gives the free pages back, but how depends on V8: Node 20's (11.3)
 * unmaps them within a second of a plain collection and ignores the options of the `gc`
 * function; Node 22's (12.4) keeps them pooled after a plain one and unmaps them at once with
 * the "last resort" flavour. So a plain collection, then a last-resort one: measured with 590
 * MiB of garbage made over time, RSS 1,251 → 67 MiB on Node 22 (at once), 693 → 97 MiB on Node
 * 20 (1.5 s later).
 *
 * Then glibc's `malloc_trim` (native-memory.ts): the native side of a burst (HTTP parsers and
 * sessions, LMDB's buffers) is freed into malloc's arenas, which give back only what sits at
 * their top. Measured with 20,000 invocations
 * suspended after a burst of sends (V8's heap 39 MiB by then): anonymous RSS 232 → 191 MiB on
 * the embedded store, 169 → 125 MiB on Redis. Where there is no glibc the step is skipped.
 * With it, the store's mapped data file (LMDB's) leaves the RSS: a burst leaves hundreds of MiB
 * of its pages resident in the process (the RSS after all of the bench's scenarios on the
 * embedded store: 595 MiB, 120 MiB once they are dropped, 115 MiB idle). Under load,
 * mapped-page-cap.ts keeps them down too.
 *
 * It works in two steps, because the collections cost what the rest does not. Once the loop has
 * been idle for three checks in a row (3 s) and the RSS is past a margin above the lowest RSS seen
 * idle, it gives back the native memory and the mapped pages (`trim`): nothing the next burst
 * pays for but a few page faults. Not at the first idle second: bursts come with lulls of a
 * second or two (2,000 sends delayed by 2 s, 2,000 sleeps of 1 s), and a release inside one made
 * the server pay for it again at once (LMDB's pages faulted back in, malloc's arenas grown
 * again). The full collections wait for a minute of quiet (`ReleasePacing`).
 *
 * Why a minute: a full collection costs the next burst its compiled code. It frees what the
 * optimized code of the hot paths holds weakly (the last burst's requests, connections,
 * actors and attempts), and V8 throws that code away ("weak objects" in --trace-deopt: 150-250
 * functions, whether the collection is a plain one or a last-resort one), so the next burst runs
 * unoptimized until it is compiled again, which takes thousands of operations. Measured with
 * bursts of 2,000 delayed sends (c=64, embedded, Node 22), the server's user CPU per burst:
 * 0.35-0.49 s warm; 1.03-1.18 s in the first burst after a release with collections, 0.44 s
 * after one with `trim` alone. Keeping the last few requests and attempts alive, so that what
 * the code refers to stays, only cut the deopts from 180 to 108. So a server loaded again
 * within a minute keeps its heap and its compiled code. (The bench's D rows leave our server
 * quiet for ~25 s before each of its next rounds: with collections after 3 s, every round
 * started cold.)
 * One that leaves the RSS above that margin is tried again on an idle check 2 s later; if it
 * gave back less than the margin too (the live memory really is that big), 4 s later, then 8...
 * up to a minute: a server that holds that much is collected at most once a minute while idle.
 * Load that comes back within a minute of a collection doubles the quiet the next one waits for
 * (up to 8 minutes), and a collection followed by a longer quiet halves it again: a server loaded
 * every minute or two keeps its compiled code, one that went quiet still gives its memory back.
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { nativeMemory } from './native-memory.js';

const CHECK_EVERY_MS = 1000;
/** Idle: the event loop was busy less than this share of the last check interval. */
const IDLE_UTILIZATION = 0.02;
/** Idle checks in a row before native memory and mapped pages are given back. */
const TRIM_QUIET_CHECKS = 3;
/** Idle checks in a row before the full collections, at first and at most (`ReleasePacing`). */
const QUIET_CHECKS = 60;
const MOST_QUIET_CHECKS = 480;
/** Load back within this long after a collection means the collection came too early. */
const TOO_EARLY_MS = 60_000;
/** RSS above the idle floor that makes a release (either step) worth it. */
const GROWTH_BYTES = 32 * 2 ** 20;
/** The wait before trying again after a release that left the RSS above that margin, doubled each time up to the last. */
const FIRST_RETRY_MS = 2_000;
const LAST_RETRY_MS = 60_000;

export interface IdleRelease {
  stop(): void;
}

type Collect = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export interface IdleReleaseOptions {
  /**
   * Files the store maps read-only into memory (LMDB's data file): their resident pages count
   * in the RSS, and dropping them from this process's page tables loses nothing (a later read
   * finds them in the kernel's page cache, or reads the file again).
   */
  mappedFiles?: readonly string[];
}

/**
 * How many quiet checks in a row the next full collection waits for: more after one that load
 * followed within `TOO_EARLY_MS`, fewer again after one that it did not.
 */
export class ReleasePacing {
  private needed = QUIET_CHECKS;
  private releasedAt: number | undefined;

  get quietChecks(): number {
    return this.needed;
  }

  released(now: number): void {
    this.releasedAt = now;
  }

  /** The event loop was busy at `now` (ms, the clock `released` was given). */
  busy(now: number): void {
    if (this.releasedAt === undefined) return;
    const tooEarly = now - this.releasedAt < TOO_EARLY_MS;
    this.needed = tooEarly
      ? Math.min(2 * this.needed, MOST_QUIET_CHECKS)
      : Math.max(Math.floor(this.needed / 2), QUIET_CHECKS);
    this.releasedAt = undefined;
  }
}

export function startIdleRelease(opts: IdleReleaseOptions = {}): IdleRelease {
  // The documented way to reach V8's collector from a running process without --expose-gc.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as Collect;
  let floor = process.memoryUsage.rss();
  let backoff = FIRST_RETRY_MS;
  let nextAt = 0;
  let last = performance.eventLoopUtilization();
  let quiet = 0;
  const pacing = new ReleasePacing();
  /** Native memory and mapped pages were given back in this quiet stretch. */
  let trimmed = false;
  const trim = () => {
    const native = nativeMemory();
    native?.trimMalloc();
    native?.dropMappedPages(opts.mappedFiles ?? []);
  };
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    quiet = busy < IDLE_UTILIZATION ? quiet + 1 : 0;
    if (quiet === 0) {
      trimmed = false;
      return pacing.busy(performance.now());
    }
    const rss = process.memoryUsage.rss();
    floor = Math.min(floor, rss);
    if (quiet < TRIM_QUIET_CHECKS || rss <= floor + GROWTH_BYTES) return;
    // The backoff after a collection holds back the next collection, not this stretch's trim.
    if (quiet < pacing.quietChecks || performance.now() < nextAt) {
      if (trimmed) return;
      trim();
      trimmed = true;
      floor = Math.min(floor, process.memoryUsage.rss());
      return;
    }
    gc();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    trim();
    trimmed = true;
    const after = process.memoryUsage.rss();
    floor = Math.min(floor, after);
    // One that gave much back is worth again soon: right after a burst, what its last work
    // held is freed over the next seconds.
    const worth = after <= floor + GROWTH_BYTES || rss - after >= GROWTH_BYTES;
    backoff = worth ? FIRST_RETRY_MS : Math.min(2 * backoff, LAST_RETRY_MS);
    nextAt = performance.now() + backoff;
    pacing.released(performance.now());
  }, CHECK_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
