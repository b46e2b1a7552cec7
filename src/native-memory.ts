/**
 * The libc calls that hand native memory back to the system, through koffi (an FFI library:
 * Node has no binding for them), and how much of this process's RSS is file pages.
 *
 * - `trimMalloc`: glibc's `malloc_trim(0)`. The native side of a burst (HTTP parsers and
 *   sessions, LMDB's buffers) is freed into malloc's arenas, which give back only what sits at
 *   their top on their own.
 * - `dropMappedPages`: `madvise(MADV_DONTNEED)` over where this process maps some files. The
 *   embedded store maps its data file read-only (LMDB), so every page a read touches stays
 *   resident in this process until dropped; dropping loses nothing, since a later read finds
 *   the page in the kernel's page cache, or reads the file again.
 *
 * Where glibc cannot be reached (musl, another system) there is no `NativeMemory`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export interface NativeMemory {
  trimMalloc(): void;
  dropMappedPages(files: readonly string[]): void;
}

let loaded: NativeMemory | null | undefined;

/** Loaded when first asked for: a server that never needs it never loads koffi. */
export function nativeMemory(): NativeMemory | undefined {
  if (loaded === undefined) loaded = load();
  return loaded ?? undefined;
}

function load(): NativeMemory | null {
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    const libc = koffi.load('libc.so.6');
    const trim = libc.func('int malloc_trim(size_t pad)') as (pad: number) => number;
    const madvise = libc.func('int madvise(uintptr_t addr, size_t length, int advice)') as (
      addr: bigint,
      length: number,
      advice: number,
    ) => number;
    return {
      trimMalloc: () => void trim(0),
      dropMappedPages: (files) => {
        for (const { start, length } of mappingsOf(files)) madvise(start, length, MADV_DONTNEED);
      },
    };
  } catch {
    return null;
  }
}

const MADV_DONTNEED = 4;
/** A line of /proc/self/maps: start-end perms offset device inode path. */
const MAPS_LINE = /^([0-9a-f]+)-([0-9a-f]+)\s+\S+\s+\S+\s+\S+\s+\S+\s+(.+)$/;

/**
 * Where this process maps `files`, from /proc/self/maps, read each time: LMDB maps its file
 * again elsewhere when the map grows.
 */
function mappingsOf(files: readonly string[]): Array<{ start: bigint; length: number }> {
  if (files.length === 0) return [];
  let maps: string;
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return [];
  }
  return maps.split('\n').flatMap((line) => {
    const m = MAPS_LINE.exec(line);
    if (!m || !files.includes(m[3]!)) return [];
    const start = BigInt(`0x${m[1]}`);
    return [{ start, length: Number(BigInt(`0x${m[2]}`) - start) }];
  });
}

/** Resident file-backed bytes of this process (`RssFile` in /proc/self/status); undefined where there is no /proc. */
export function residentFileBytes(): number | undefined {
  try {
    const kib = /^RssFile:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return kib ? Number(kib[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
