/**
 * Keeps the pages of the store's mapped data file from piling up in the RSS while the server
 * is busy.
 *
 * LMDB reads through a read-only map of its file: each page a lookup touches stays resident
 * in this process until it is dropped, and under load that is most pages written lately, as
 * commits read back what earlier ones wrote. Restate's RocksDB reads with pread into a cache of
 * bounded size instead, so the file's pages stay in the kernel's page cache and out of its RSS.
 * Measured with 8 bursts of 2,000 delayed sends (c=64, embedded store): the peak of the
 * process's resident file pages was 198 MiB (54 of them Node's own), 84–113 MiB with this cap
 * (checks every 50–500 ms, caps of 8–16 MiB; CPU per send looked unchanged then, but measured
 * again later a cap that low thrashed, see `CAP_BYTES`); in the bench (S1–S8, `--repeat 3
 * --alternate 2`, 16 MiB every 100 ms) the peak RSS went from 0.55–1.06× Restate's to
 * 0.37–0.70×. The idle release (idle-release.ts) drops them once the server is quiet; this drops
 * them under load too, whenever they have grown past the cap (`CapPacing`) above the lowest seen
 * (all of this process's file pages count: its own code's are the floor).
 * What is dropped stays in the page cache: the pages a later lookup needs again come back with
 * a minor fault each, and with each fault the kernel maps up to 64 KiB of cached neighbours.
 */
import { performance } from 'node:perf_hooks';
import { nativeMemory, residentFileBytes } from './native-memory.js';

/**
 * A check reads /proc/self/status (26 µs here). A burst that loads thousands of invocations
 * touches up to 50 MiB of the file within 100 ms (the bench samples the RSS every 100 ms): the
 * kernel maps the cached neighbours of each page it faults in, up to 64 KiB around it.
 */
const CHECK_EVERY_MS = 50;
/**
 * Resident file pages above the lowest seen that make a drop worth it: more than the hot paths
 * fault back in at once, or the drops thrash. With 8 MiB, the pages a burst's lookups need (the
 * B-tree's upper levels and the invocations in flight, with their neighbours) passed the cap
 * again within each 50 ms, and the map was dropped 15 times a second (224 `madvise` calls in 15 s
 * of no-op calls at c=64; 6 with 32 MiB). Measured on one map (embedded-store.ts `MAP_BYTES`),
 * three fresh servers each, after warm-up, server CPU per operation: no-op calls at c=64 0.63 ms
 * with 8 MiB, 0.56 with 16, 0.52 with 32, 0.49 with 64; 6,000 sends delayed 1 s, their runs
 * included, 0.90 (8 MiB, on lmdb-js's growing maps), 0.76, 0.62, 0.64 ms. The peak RSS was the
 * same with 8, 16 and 32 MiB (201–227 MiB), 30 MiB more with 64.
 */
const CAP_BYTES = 32 * 2 ** 20;
/**
 * Those hot pages grow with the data file: with a 257 MiB file, drops at 32 MiB came five times
 * a second again. A drop within `THRASH_MS` of the one before doubles the cap, up to
 * `MOST_CAP_BYTES`; one after `CALM_MS` without a drop halves it, down to `CAP_BYTES`. Measured
 * with that file, 10,000 no-op calls at c=64, server CPU per call and peak RSS: 1.02 ms and 212
 * MiB with the cap held at 32 MiB, 0.60 ms and 234 MiB with it free to reach 64 MiB, 0.60 ms and
 * 426 MiB with 256 MiB (under `strace`, 2 drops in 15 s against 89 at 32 MiB).
 */
const THRASH_MS = 1_000;
const CALM_MS = 10_000;
const MOST_CAP_BYTES = 64 * 2 ** 20;

/** The cap in force, from when the drops came (ms, any one clock). */
export class CapPacing {
  private lastDrop = -Infinity;
  private cap: number;

  constructor(private readonly least: number) {
    this.cap = least;
  }

  get bytes(): number {
    return this.cap;
  }

  dropped(now: number): void {
    const since = now - this.lastDrop;
    if (since < THRASH_MS) this.cap = Math.min(2 * this.cap, Math.max(MOST_CAP_BYTES, this.least));
    else if (since > CALM_MS) this.cap = Math.max(this.cap / 2, this.least);
    this.lastDrop = now;
  }
}

export interface MappedPageCap {
  stop(): void;
}

/** Nothing to do, and no timer, without mapped files or where libc or /proc cannot be reached. */
export function startMappedPageCap(
  mappedFiles: readonly string[],
  { everyMs = CHECK_EVERY_MS, capBytes = CAP_BYTES } = {},
): MappedPageCap {
  const none = { stop: () => undefined };
  if (mappedFiles.length === 0) return none;
  const first = residentFileBytes();
  const native = nativeMemory();
  if (first === undefined || !native) return none;
  let floor = first;
  const pacing = new CapPacing(capBytes);
  const timer = setInterval(() => {
    const resident = residentFileBytes() ?? floor;
    floor = Math.min(floor, resident);
    if (resident - floor <= pacing.bytes) return;
    native.dropMappedPages(mappedFiles);
    pacing.dropped(performance.now());
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
