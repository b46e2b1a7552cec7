/**
 * The journal length and last history sequence number of each invocation the embedded store
 * appended to lately, so that an append does not open an LMDB cursor to find where it goes
 * (two reverse cursor reads per commit; lmdb-js sets up an iterator and renews a cursor for
 * each). The store is the only writer of its partitions (alone, or as the holder of their
 * leases among workers sharing the files), so what it wrote last is what a cursor would find.
 * Only a new invocation's history is still read with a cursor: no single key tells whether a
 * history is empty, as its oldest entries are trimmed.
 *
 * Filled from the files at an invocation's first append after the store opened, changed only
 * by write transactions that commit: a transaction's changes are staged and kept, or dropped
 * with it. An invocation is forgotten when it is deleted or stored as no longer active, and
 * everything when there are more than `LIMIT` or when a partition is written at another
 * fencing epoch than before (another worker may have written it meanwhile); forgotten
 * positions are read again.
 */
export interface Position {
  /** The journal's length; undefined: not known. */
  journal?: number;
  /** The last history sequence number, -1 for none; undefined: not known. */
  history?: number;
}

const LIMIT = 100_000;

export class Positions {
  private readonly known = new Map<string, Position>();
  /** The write transaction's changes; null: forget. */
  private readonly staged = new Map<string, Position | null>();
  /** The fencing epoch each partition was last written at (workers sharing the files). */
  private readonly epochs = new Map<number, number>();

  /** Called before a fenced write of `partition` at `epoch`. */
  writtenAt(partition: number, epoch: number): void {
    if (this.epochs.get(partition) === epoch) return;
    // Rare (a partition changed hands): forgetting all is simpler than finding the partition's.
    this.known.clear();
    this.epochs.set(partition, epoch);
  }

  /** What is known of invocation `id` of `partition`, with the transaction's changes. */
  get(partition: number, id: string): Position | undefined {
    const key = keyOf(partition, id);
    const staged = this.staged.get(key);
    return staged === undefined ? this.known.get(key) : (staged ?? undefined);
  }

  stage(partition: number, id: string, change: Position): void {
    this.staged.set(keyOf(partition, id), { ...this.get(partition, id), ...change });
  }

  forget(partition: number, id: string): void {
    this.staged.set(keyOf(partition, id), null);
  }

  /** The transaction committed. */
  keep(): void {
    for (const [key, position] of this.staged) {
      if (position === null) this.known.delete(key);
      else this.known.set(key, position);
    }
    this.staged.clear();
    if (this.known.size > LIMIT) this.known.clear();
  }

  /** The transaction was aborted. */
  drop(): void {
    this.staged.clear();
  }
}

const keyOf = (partition: number, id: string): string => `${partition}/${id}`;
