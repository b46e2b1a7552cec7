/**
 * Writes the embedded store holds in memory in front of LMDB: the group commits that are in
 * the commit log (./commit-log.ts) but not yet checkpointed into LMDB, and, while it is being
 * built, the group whose record is not written yet (./table-access.ts takes it out again if
 * that record fails). Per table, its keys in LMDB's order (bytewise) with the value written
 * last, or null where the key was removed; a read looks here first.
 *
 * A sorted array per table rather than a tree: an overlay lives for one checkpoint interval
 * (a few thousand keys), where a binary search and an insert's copy of the array's tail cost
 * less than a tree's nodes.
 */
import type { TableName } from './tables.js';

export interface OverlayEntry {
  key: Buffer;
  /** null: removed. */
  value: Buffer | null;
}

export class Overlay {
  private readonly tables = new Map<TableName, OverlayEntry[]>();
  private count = 0;

  /** How many keys it holds, over all tables. */
  get size(): number {
    return this.count;
  }

  /** The value written last under `key`: null when removed, undefined when not written here. */
  get(table: TableName, key: Buffer): Buffer | null | undefined {
    const entries = this.tables.get(table);
    if (!entries) return undefined;
    const at = search(entries, key);
    return at >= 0 ? entries[at]!.value : undefined;
  }

  /** Returns what it held under `key` before (undefined: nothing). */
  set(table: TableName, key: Buffer, value: Buffer | null): Buffer | null | undefined {
    let entries = this.tables.get(table);
    if (!entries) this.tables.set(table, (entries = []));
    const at = search(entries, key);
    if (at < 0) {
      entries.splice(-at - 1, 0, { key, value });
      this.count++;
      return undefined;
    }
    const before = entries[at]!.value;
    entries[at]!.value = value;
    return before;
  }

  /** Forgets `key`, as if it had never been written here. */
  unset(table: TableName, key: Buffer): void {
    const entries = this.tables.get(table);
    const at = entries ? search(entries, key) : -1;
    if (at < 0) return;
    entries!.splice(at, 1);
    this.count--;
  }

  /** Its entries with `start <= key < end`, in order (reversed: from the end). */
  *range(table: TableName, start: Buffer, end: Buffer, reverse = false): Generator<OverlayEntry> {
    const entries = this.tables.get(table);
    if (!entries) return;
    const from = insertionPoint(entries, start);
    const to = insertionPoint(entries, end);
    if (reverse) for (let i = to - 1; i >= from; i--) yield entries[i]!;
    else for (let i = from; i < to; i++) yield entries[i]!;
  }

  /** Every table's entries as writes, for the checkpoint. */
  *writes(): Generator<{ table: TableName; key: Buffer; value: Buffer | null }> {
    for (const [table, entries] of this.tables) for (const { key, value } of entries) yield { table, key, value };
  }

  clear(): void {
    this.tables.clear();
    this.count = 0;
  }
}

/** The index of `key`, or -(insertion point) - 1 when absent. */
function search(entries: readonly OverlayEntry[], key: Buffer): number {
  let lo = 0;
  let hi = entries.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = Buffer.compare(entries[mid]!.key, key);
    if (c < 0) lo = mid + 1;
    else if (c > 0) hi = mid - 1;
    else return mid;
  }
  return -lo - 1;
}

/** The index of the first entry whose key is not below `key`. */
function insertionPoint(entries: readonly OverlayEntry[], key: Buffer): number {
  const at = search(entries, key);
  return at >= 0 ? at : -at - 1;
}
