/**
 * Which layout an embedded store's files have, kept in meta ('layout'), and the one upgrade
 * from the layout before. Layout 1 kept snapshots, journals and histories in tables of their
 * own and indexed every timer by its key alone; layout 2 keeps an invocation's keys side by
 * side (./plan.ts `invocationKey` says why). Files without the number are layout 1 (or new):
 * their tables are moved over in one write transaction when the store opens, so a crash during
 * the move leaves layout 1 whole and the next open moves it again.
 */
import type { Database, RootDatabase } from 'lmdb';
import { invocationKey, timerIndexKey } from './plan.js';
import type { TimerRef } from '../types.js';
import type { TableName, Tables } from './tables.js';
import { tupleKey, hasHashedPart, type KeyPart, type StoredKey } from './tuple.js';

export const LAYOUT = 2;
/** Tables of layout 1 that layout 2 no longer has; each key's first parts are `(p, id)`. */
export const LAYOUT_TABLES_BEFORE = ['snapshots', 'journal', 'history'] as const;

const LAYOUT_KEY = tupleKey('layout');

/** What the upgrade needs of the store: its tables, and key writes that keep hashed keys' originals. */
export interface LayoutTarget {
  readonly db: Tables;
  put(table: TableName, key: StoredKey, value: Buffer): void;
  remove(table: TableName, key: Buffer): void;
  /** The parts of `key` of `table`, read from its original when a part is hashed. */
  partsOf(table: string, key: Buffer): KeyPart[];
  forgetOriginal(table: string, key: Buffer): void;
}

export function upgradeLayout(root: RootDatabase, path: string, target: LayoutTarget): void {
  const stored = target.db.meta.get(LAYOUT_KEY);
  if (stored !== undefined) {
    const found = Number(stored.toString('utf8'));
    if (found !== LAYOUT)
      throw new Error(`the embedded store in ${path} has layout ${found}; this redstate reads layout ${LAYOUT}`);
    return;
  }
  const before = LAYOUT_TABLES_BEFORE.flatMap((name) => {
    const db = openIfThere(root, name);
    return db ? [{ name, db }] : [];
  });
  const newKey = {
    snapshots: ([p, id]: KeyPart[]) => invocationKey.snapshot(p as number, id as string),
    journal: ([p, id, index]: KeyPart[]) => invocationKey.journal(p as number, id as string, index as number),
    history: ([p, id, seq]: KeyPart[]) => invocationKey.history(p as number, id as string, seq as number),
  };
  root.transactionSync(() => {
    for (const { name, db } of before) {
      for (const { key, value } of [...db.getRange({})]) {
        target.put('invocations', newKey[name](target.partsOf(name, key)), value);
        if (hasHashedPart(key)) target.forgetOriginal(name, key);
      }
      db.dropSync();
    }
    for (const { key, value } of [...target.db.timerIndex.getRange({})]) {
      const [p, timerKey] = target.partsOf('timerIndex', key);
      const index = timerIndexKey(p as number, layout1Timer(timerKey as string));
      if (index.table === 'timerIndex') continue;
      target.put(index.table, index.key, value);
      target.remove('timerIndex', key);
    }
    target.db.meta.putSync(LAYOUT_KEY, Buffer.from(String(LAYOUT), 'utf8'));
  });
}

/** Table `name`, or undefined where the files have none (a new store): nothing is created. */
function openIfThere(root: RootDatabase, name: string): Database<Buffer, Buffer> | undefined {
  // lmdb-js reads `create` and answers undefined for a missing table (open.js), though its
  // types say neither.
  const options = { name, encoding: 'binary' as const, keyEncoding: 'binary' as const, create: false };
  return root.openDB<Buffer, Buffer>(options) as Database<Buffer, Buffer> | undefined;
}

/**
 * A timer indexed by layout 1, with its owner: layout 1 kept no owner, and every timer key it
 * holds was written as `purpose|owner…` (a fact of that layout's data, which no later build
 * writes: owners are a field since).
 */
function layout1Timer(key: string): TimerRef {
  const owner = key.split('|', 2)[1];
  return owner ? { key, owner } : { key };
}
