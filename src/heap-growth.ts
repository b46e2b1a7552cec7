/**
 * How far V8 lets the heap grow past what was live at its last full collection.
 *
 * Under load the anonymous part of the server's RSS is V8's heap, and most of it is garbage
 * waiting for the next full collection: in the bench's closed loops (c=64) the live heap stays
 * near 40 MiB while the heap grows to ~150 MiB between collections. V8 sets the next
 * collection's limit at the live size times a factor it works out from how fast the program
 * allocates against how fast it collects; a server that allocates fast gets a factor near
 * V8's maximum, 4. With a factor of 2 (`--heap-growing-percent=100`) the heap carries at most
 * as much garbage as is live, not up to three times as much, and a collection still frees at
 * least as much as it has to mark.
 *
 * Measured (`BENCH_SERVER_FLAGS=--heap-growing-percent=100 npm run bench -- --store embedded
 * --skip-ref`, all of S1–S8 alternating twice with no flag, Node 22): anonymous peak 133–169 MiB
 * against 157–252, the same rates within the noise, 0–14 % more CPU per operation (most in the
 * bursts, where more is live when V8 collects). A factor of 1.5 (`=50`) went down to 115–122
 * MiB but cost 5–15 % more CPU on every scenario. docs/architecture.md, "What stays in memory".
 *
 * A `--heap-growing-percent` given on node's own command line is left as it is.
 */
import { setFlagsFromString } from 'node:v8';

const GROWING_PERCENT = 100;

export function limitHeapGrowth(): void {
  if (process.execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent')))
    return;
  // V8 reads the flag each time it sets the limit after a full collection, so it applies
  // from the first one on.
  setFlagsFromString(`--heap-growing-percent=${GROWING_PERCENT}`);
}
