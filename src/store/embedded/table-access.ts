/**
 * How the embedded store reads and writes its tables: straight in LMDB (`lmdbTables`: workers
 * sharing the files, whose every commit is a synced LMDB transaction other processes read at
 * once), or through the overlay of the commit log (`LayeredTables`: a server alone on its
 * files), where a read sees what the log holds and the group being built, then LMDB.
 */
import type { LoggedWrite } from './commit-log.js';
import type { Overlay, OverlayEntry } from './overlay.js';
import type { TableName, Tables } from './tables.js';

/** The keys `start <= key < end` of a table, in order or reversed, at most `limit`. */
export interface RangeQuery {
  start: Buffer;
  end: Buffer;
  reverse?: boolean;
  limit?: number;
}

export interface TableAccess {
  get(table: TableName, key: Buffer): Buffer | undefined;
  put(table: TableName, key: Buffer, value: Buffer): void;
  /** Whether the key was there. */
  remove(table: TableName, key: Buffer): boolean;
  entries(table: TableName, range: RangeQuery): Array<{ key: Buffer; value: Buffer }>;
  keys(table: TableName, range: RangeQuery): Buffer[];
}

/** lmdb-js's range options: a reversed range starts at its upper bound. */
const lmdbRange = ({ start, end, reverse, limit }: RangeQuery) =>
  reverse ? { start: end, end: start, reverse, limit } : { start, end, limit };

export function lmdbTables(db: Tables): TableAccess {
  return {
    get: (table, key) => db[table].get(key),
    put: (table, key, value) => void db[table].putSync(key, value),
    remove: (table, key) => db[table].removeSync(key),
    entries: (table, range) => [...db[table].getRange(lmdbRange(range))],
    keys: (table, range) => [...db[table].getKeys(lmdbRange(range))],
  };
}

export class LayeredTables implements TableAccess {
  /** The writes of the group being built, in order, and what each replaced in the overlay. */
  private group: LoggedWrite[] = [];
  private replaced: Array<Buffer | null | undefined> = [];

  /** @param overlay the groups in the commit log and not yet in LMDB, and the one being built */
  constructor(
    private readonly overlay: Overlay,
    private readonly lmdb: TableAccess,
  ) {}

  get(table: TableName, key: Buffer): Buffer | undefined {
    const value = this.overlay.get(table, key);
    if (value === null) return undefined; // removed
    return value ?? this.lmdb.get(table, key);
  }

  put(table: TableName, key: Buffer, value: Buffer): void {
    this.write(table, key, value);
  }

  remove(table: TableName, key: Buffer): boolean {
    const there = this.get(table, key) !== undefined;
    this.write(table, key, null);
    return there;
  }

  entries(table: TableName, range: RangeQuery): Array<{ key: Buffer; value: Buffer }> {
    const written = [...this.overlay.range(table, range.start, range.end, range.reverse)];
    if (written.length === 0) return this.lmdb.entries(table, range);
    // Each removed key may hide one of LMDB's, so LMDB is asked for that many more.
    const limit = range.limit === undefined ? undefined : range.limit + written.length;
    return merged(written, this.lmdb.entries(table, { ...range, limit }), range.reverse)
      .filter((e): e is { key: Buffer; value: Buffer } => e.value !== null)
      .slice(0, range.limit);
  }

  keys(table: TableName, range: RangeQuery): Buffer[] {
    if (this.overlay.range(table, range.start, range.end).next().done) return this.lmdb.keys(table, range);
    return this.entries(table, range).map(({ key }) => key);
  }

  /** The writes of the group being built, in the order they were made. */
  get groupWrites(): readonly LoggedWrite[] {
    return this.group;
  }

  /** The group's writes stay (its record is in the log). */
  keepGroup(): void {
    this.group = [];
    this.replaced = [];
  }

  /** Takes the group's writes out of the overlay again (its record could not be written). */
  dropGroup(): void {
    for (let i = this.group.length - 1; i >= 0; i--) {
      const { table, key } = this.group[i]!;
      const before = this.replaced[i];
      if (before === undefined) this.overlay.unset(table, key);
      else this.overlay.set(table, key, before);
    }
    this.keepGroup();
  }

  private write(table: TableName, key: Buffer, value: Buffer | null): void {
    this.replaced.push(this.overlay.set(table, key, value));
    this.group.push({ table, key, value });
  }
}

/** `newer` over `older`, both sorted in the same order: where both hold a key, `newer`'s entry. */
function merged(newer: readonly OverlayEntry[], older: readonly OverlayEntry[], reverse = false): OverlayEntry[] {
  const sign = reverse ? -1 : 1;
  const out: OverlayEntry[] = [];
  let i = 0;
  let j = 0;
  while (i < newer.length || j < older.length) {
    const a = newer[i];
    const b = older[j];
    const c = !a ? 1 : !b ? -1 : sign * Buffer.compare(a.key, b.key);
    if (c <= 0) {
      out.push(a!);
      i++;
      if (c === 0) j++;
    } else {
      out.push(b!);
      j++;
    }
  }
  return out;
}
