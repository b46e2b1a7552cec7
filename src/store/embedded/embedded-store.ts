/**
 * The default store when no Redis URL is given: LMDB through lmdb-js, one environment in a
 * directory, one named table per concern, binary tuple keys (./tuple.ts).
 *
 * Commits are durable when they resolve; the commits of one event-loop turn are one group,
 * synced once (see `write`). A server alone on its files syncs each group as one record of
 * its commit log (./commit-log.ts) and keeps it in memory in front of LMDB (./overlay.ts)
 * until a checkpoint, every CHECKPOINT_MS, stores the groups since the last one in one synced
 * LMDB transaction; workers sharing the files commit each group as a synced LMDB transaction.
 *
 *   invocations (p, id)                    -> snapshot JSON
 *               (p, id, 1, index)          -> journal entry: 2-byte BE type + payload
 *               (p, id, 2, seq)            -> history entry JSON  seq grows forever; the
 *                                                                 oldest go past HISTORY_LIMIT
 *               (p, id, 3, timer key)      -> timers key  the index of the invocation's timers
 *   active      (p, id)                    -> empty
 *   state       (p, service, key, field)   -> value bytes
 *   timers      (p, dueAt, key)            -> empty       ordered scan for due timers
 *   timerIndex  (p, key)                   -> timers key  the index of timers of no invocation
 *   outbox      (p, id)                    -> body JSON
 *   records     (p, kind, key)             -> value JSON
 *   meta        ('registry')               -> registry JSON
 *               ('layout')                 -> this layout's number (./layout.ts)
 *   originals   (table, SHA-256 of a key)  -> the key's unhashed encoding, for keys with a
 *                                             hashed part (./tuple.ts: object and state keys
 *                                             longer than LMDB's key limit)
 *   coordination                           -> leases and nodes of workers sharing the files
 *                                             (./coordination.ts)
 *
 * An invocation's keys sort side by side (./plan.ts `invocationKey` says why).
 */
import { createHash } from 'node:crypto';
import { mkdir, realpath } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import {
  bytesOf,
  checkJournalIndex,
  checkTransition,
  conflictMessage,
  recordConflictMessage,
  decodeEntry,
  decodeJson,
  encodeJson,
  sortedUtf8,
} from '../codec.js';
import {
  Fenced,
  HISTORY_LIMIT,
  LAZY_COMMIT_MS,
  TransitionConflict,
  type HistoryEntry,
  type JournalEntry,
  type OutboxMessage,
  type Store,
  type StoreInfo,
  type Timer,
  type Transition,
} from '../types.js';
import { storeMetrics } from '../../telemetry/metrics.js';
import { Tenure } from '../tenure.js';
import { EmbeddedCoordination } from './coordination.js';
import { upgradeLayout, LAYOUT_TABLES_BEFORE } from './layout.js';
import {
  invocationKey,
  isSnapshotKey,
  partitionKey,
  partitionRange,
  planTransition,
  type KeyRange,
  type Plan,
  type TimerIndexKey,
} from './plan.js';
import { Positions } from './positions.js';
import { CommitLog, LOG_BYTES, readCommitLog, type LoggedWrite, type StoredWrite } from './commit-log.js';
import { Overlay } from './overlay.js';
import { LayeredTables, lmdbTables, type TableAccess } from './table-access.js';
import { TABLES, type TableName, type Tables } from './tables.js';
import { decodeTuple, hasHashedPart, HashedPart, tupleKey, type KeyPart, type StoredKey } from './tuple.js';

const EMPTY = Buffer.alloc(0);

/** meta ('checkpoint'): the generation of the commit log's records the last checkpoint stored. */
const CHECKPOINT_KEY = tupleKey('checkpoint');
/**
 * How long the groups in the commit log wait for their checkpoint, and how many keys they may
 * hold meanwhile: each checkpoint is one synced LMDB transaction for all of them.
 */
const CHECKPOINT_MS = 50;
const COMMIT_LOG = 'commit.log';
const CHECKPOINT_KEYS = 50_000;

/**
 * The address space LMDB maps the data file into, reserved once at open. lmdb-js starts with a
 * 128 KiB map and doubles it as the file grows, and keeps every earlier map mapped until the
 * store closes (a read may still hold a buffer into one): each page read after a growth became
 * resident once per map. After 20,000 no-op calls (c=64), with no drops (mapped-page-cap.ts),
 * the process held 141 MiB of a 52 MiB data file in 9 maps; with one map, at most the file.
 * Only address space: the file still grows as it is written, and past this size lmdb-js grows
 * the map as before.
 */
const MAP_BYTES = 2 ** 36;

interface PendingWrite {
  writes: () => void;
  /** performance.now() when the commit was asked for. */
  since: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface EmbeddedStoreOptions {
  /**
   * Other processes write the same files (workers, src/workers.ts): the store coordinates with
   * them through leases (`coordination`), fences its commits by them, and reads what they
   * committed up to the moment of each read.
   */
  shared?: boolean;
}

export class EmbeddedStore implements Store {
  private pending: PendingWrite[] = [];
  /** A flush of `pending` is scheduled for this event-loop turn. */
  private flushing = false;
  /** When the lazy writes in `pending` go, if nothing else takes them first. */
  private lazyTimer: NodeJS.Timeout | undefined;
  private readonly positions = new Positions();
  /** Where reads and writes go: LMDB, or (alone on the files) the log's overlays in front of it. */
  private tables: TableAccess;
  /** Alone on the files: the commit log, and the reads and writes through its overlay. */
  private logging: { log: CommitLog; tables: LayeredTables } | undefined;
  /** The groups in the commit log (and the one being built), in front of LMDB. */
  private readonly logged = new Overlay();
  private checkpointTimer: NodeJS.Timeout | undefined;
  private readonly metrics = storeMetrics('embedded');
  private readonly tenure = new Tenure();
  readonly coordination: EmbeddedCoordination | undefined;

  private constructor(
    private readonly root: RootDatabase,
    private readonly db: Tables,
    readonly info: StoreInfo,
    shared: boolean,
  ) {
    this.tables = lmdbTables(db);
    this.coordination = shared
      ? new EmbeddedCoordination(
          { table: db.coordination, write: (change) => this.write(change), read: (read) => (this.fresh(), read()) },
          this.tenure,
        )
      : undefined;
  }

  static async open(dir: string, opts: EmbeddedStoreOptions = {}): Promise<EmbeddedStore> {
    const path = resolve(dir);
    await mkdir(path, { recursive: true });
    // Defaults keep every commit durable: no noSync / noMetaSync / useWritemap. noSubdir is
    // explicit because lmdb-js guesses "file" for paths that look like they have an extension.
    const root = open({
      path,
      noSubdir: false,
      maxDbs: TABLES.length + LAYOUT_TABLES_BEFORE.length + 2,
      mapSize: MAP_BYTES,
    });
    const db = {} as Tables;
    for (const name of TABLES)
      db[name] = root.openDB<Buffer, Buffer>({ name, encoding: 'binary', keyEncoding: 'binary' });
    const info = {
      backend: 'embedded' as const,
      location: path,
      warnings: [],
      mappedFiles: [join(await realpath(path), 'data.mdb')],
    };
    const generation = replayCommitLog(root, db, join(path, COMMIT_LOG));
    const store = new EmbeddedStore(root, db, info, !!opts.shared);
    upgradeLayout(root, path, {
      db,
      put: (table, key, value) => store.put(table, key, value),
      remove: (table, key) => store.remove(table, key),
      partsOf: (table, key) => store.partsOf(table, key),
      forgetOriginal: (table, key) => db.originals.removeSync(originalsKey(table, key)),
    });
    // Workers sharing the files commit straight to LMDB: the others read it at once.
    if (!opts.shared) store.useLog(join(path, COMMIT_LOG), generation);
    store.metrics.connected.set(1);
    return store;
  }

  async commit(t: Transition): Promise<void> {
    checkTransition(t);
    // Built now, not when the write runs: the caller may reuse its objects.
    const plan = planTransition(t);
    if (!this.coordination) return this.write(() => this.apply(t, plan, undefined), t.lazy);
    // Refused here, without a transaction, when this worker does not hold the partition now.
    const epoch = this.tenure.epochFor(t.partition);
    const lapsed = this.tenure.confirmation(t.partition);
    if (lapsed) await lapsed;
    return this.tenure.track(
      t.partition,
      this.write(() => this.apply(t, plan, epoch), t.lazy),
    );
  }

  /** Another process may have committed since this one's read snapshot began: begin a new one. */
  private fresh(): void {
    if (this.coordination) this.root.resetReadTxn();
  }

  /**
   * Runs `writes` in a durable write transaction, resolving once it is on disk. Writes
   * requested in one event-loop turn share one synchronous transaction on this thread (a
   * record of the commit log, or an LMDB transaction), one
   * fsync for all (our group commit, design.md "Store"): like Redis with `appendfsync always`,
   * the thread waits for the disk once per turn, and what arrives meanwhile forms the next
   * group. Measured against lmdb-js's asynchronous writer thread, which calls back into this
   * thread for every child transaction, this does more calls per second at 1 and at 64 callers.
   * A writer thread of our own (worker_threads, each group v8-serialized to it, this thread
   * free while the disk syncs) was slower too: S1a-S3 did 8-20% fewer calls per second, with
   * 20% more server CPU per call and 40 MiB more RSS. The fsync stays on every call's path
   * either way, and on two cores the SDK and the load use the time this thread waits.
   * A write that throws a TransitionConflict or Fenced has written nothing (see `apply`) and fails alone.
   * A `lazy` write waits up to LAZY_COMMIT_MS for another one to go with.
   */
  private write<T>(change: () => T, lazy = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let result: T;
      const writes = () => {
        result = change();
      };
      this.pending.push({ writes, since: performance.now(), resolve: () => resolve(result), reject });
      if (!lazy) this.flushSoon();
      else this.lazyTimer ??= setTimeout(() => this.flushSoon(), LAZY_COMMIT_MS);
    });
  }

  private flushSoon(): void {
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => this.flushPending());
  }

  private flushPending(): void {
    this.flushing = false;
    clearTimeout(this.lazyTimer);
    this.lazyTimer = undefined;
    const batch = this.pending;
    this.pending = [];
    const conflicts = new Map<PendingWrite, TransitionConflict | Fenced>();
    const group = () => {
      for (const w of batch) {
        try {
          w.writes();
        } catch (err) {
          if (!(err instanceof TransitionConflict || err instanceof Fenced)) throw err;
          conflicts.set(w, err);
        }
      }
    };
    try {
      if (this.logging) this.writeLogged(group, this.logging);
      else this.root.transactionSync(group);
    } catch (err) {
      // The transaction was aborted: nothing of this group is stored.
      this.positions.drop();
      for (const w of batch) w.reject(err);
      return;
    }
    this.positions.keep();
    const durableAt = performance.now();
    this.metrics.groupCommitSize.observe(batch.length);
    for (const w of batch) {
      this.metrics.commitDuration.observe((durableAt - w.since) / 1000);
      const conflict = conflicts.get(w);
      if (conflict) w.reject(conflict);
      else w.resolve();
    }
  }

  /**
   * A group's writes go into the overlay as they are made (nothing else reads meanwhile: the
   * group runs in one go on this thread), its record into the commit log, and they stay once
   * the record is synced; if the group throws, they are taken out again. A record that could
   * not be written may or may not be on disk, and a restart would replay it if it is: the
   * process stops, and the restart settles each of the group's commits from what the log holds.
   */
  private writeLogged(group: () => void, { log, tables: layered }: { log: CommitLog; tables: LayeredTables }): void {
    try {
      group();
      if (layered.groupWrites.length > 0) appendOrStop(log, layered.groupWrites);
    } catch (err) {
      layered.dropGroup();
      throw err;
    }
    layered.keepGroup();
    if (log.size > LOG_BYTES / 2 || this.logged.size > CHECKPOINT_KEYS) setImmediate(() => this.checkpoint());
    else if (this.logged.size > 0) this.checkpointTimer ??= setTimeout(() => this.checkpoint(), CHECKPOINT_MS).unref();
  }

  private useLog(path: string, generation: number): void {
    this.logging = {
      log: CommitLog.open(path, generation),
      tables: new LayeredTables(this.logged, lmdbTables(this.db)),
    };
    this.tables = this.logging.tables;
  }

  /**
   * Stores the groups in the commit log in LMDB, in one synced transaction that also records
   * their generation as checkpointed; the log then starts again. A checkpoint that fails
   * (the disk is full) throws out of its timer and stops the process: what it could not store
   * is still in the log, and the restart replays it, or says why it cannot.
   */
  private checkpoint(): void {
    clearTimeout(this.checkpointTimer);
    this.checkpointTimer = undefined;
    if (!this.logging || this.logged.size === 0) return;
    const { log } = this.logging;
    storeCheckpoint(this.root, this.db, log.generation, this.logged.writes());
    this.logged.clear();
    log.restart(log.generation + 1);
  }

  /**
   * Checks the fencing epoch (`epoch`: the one this worker holds the partition at; undefined:
   * unfenced), every append and every record expectation before writing anything, so that a
   * refused commit writes nothing: as in the Redis script, a deleted journal counts as empty
   * and appends to one journal follow each other.
   */
  private apply(t: Transition, plan: Plan, epoch: number | undefined): void {
    const p = t.partition;
    if (epoch !== undefined) {
      const current = this.coordination!.epochOf(p);
      if (current !== epoch) throw this.tenure.refusedByStore(p, epoch, current);
      this.positions.writtenAt(p, epoch);
    }
    const lengths = new Map<string, number>(plan.deletes.map((d) => [d.id, 0]));
    plan.appends.forEach((append, i) => {
      const length = lengths.get(append.id) ?? this.journalLengthIn(p, append.id, append.range);
      if (length !== append.at) throw new TransitionConflict(conflictMessage(t, i, length));
      lengths.set(append.id, length + append.entries.length);
    });
    plan.expects.forEach((expect, i) => {
      const stored = this.tables.get('records', expect.key);
      const holds =
        expect.json === null ? stored === undefined : stored !== undefined && Buffer.compare(stored, expect.json) === 0;
      if (!holds) throw new TransitionConflict(recordConflictMessage(t, i));
    });
    // Past the checks: this write goes in whole, staged with its transaction.
    for (const d of plan.deletes) this.positions.forget(p, d.id);
    for (const append of plan.appends) this.positions.stage(p, append.id, { journal: lengths.get(append.id)! });
    for (const d of plan.deletes) {
      this.remove('invocations', d.snapshot);
      this.remove('active', d.active);
      this.removeRange('invocations', d.journal);
      this.removeRange('invocations', d.history);
    }
    for (const append of plan.appends) for (const [key, entry] of append.entries) this.put('invocations', key, entry);
    for (const inv of plan.invocations) {
      this.put('invocations', inv.key, inv.json);
      if (inv.active) this.put('active', inv.key, EMPTY);
      else this.remove('active', inv.key.key);
    }
    for (const op of plan.state) {
      if (op.kind === 'set') this.put('state', op.key, op.value);
      else if (op.kind === 'clear') this.remove('state', op.key);
      else this.removeRange('state', op.range);
    }
    for (const index of plan.timersRemove) this.removeTimer(index);
    for (const timer of plan.timersAdd) {
      this.removeTimer(timer.index);
      this.put('timers', timer.slot, EMPTY);
      this.put(timer.index.table, timer.index.key, timer.slot.key);
    }
    for (const key of plan.outboxRemove) this.remove('outbox', key);
    for (const msg of plan.outboxAdd) this.put('outbox', msg.key, msg.json);
    for (const rec of plan.records) {
      if (rec.json === null) this.remove('records', rec.key.key);
      else this.put('records', rec.key, rec.json);
    }
    for (const h of plan.history) this.appendHistory(p, h.id, h.entries);
    // Its next append, if any, is rare enough to read where it goes again.
    for (const inv of plan.invocations) if (!inv.active) this.positions.forget(p, inv.id);
  }

  private appendHistory(partition: number, id: string, entries: Buffer[]): void {
    const range = invocationKey.historyRange(partition, id);
    const next = (this.positions.get(partition, id)?.history ?? this.lastSeq(range)) + 1;
    entries.forEach((json, i) => this.put('invocations', invocationKey.history(partition, id, next + i), json));
    this.positions.stage(partition, id, { history: next + entries.length - 1 });
    const keepFrom = next + entries.length - HISTORY_LIMIT;
    if (keepFrom > 0)
      this.removeRange('invocations', { start: range.start, end: invocationKey.history(partition, id, keepFrom).key });
  }

  /**
   * Inside the write transaction. A journal's entries are numbered from 0 without gaps (appends
   * go at its length, deletes take all of it), so a journal without entry 0 is empty: one
   * lookup instead of a cursor for a new invocation.
   */
  private journalLengthIn(partition: number, id: string, range: KeyRange): number {
    const known = this.positions.get(partition, id)?.journal;
    if (known !== undefined) return known;
    return this.tables.get('invocations', invocationKey.journal(partition, id, 0).key) === undefined
      ? 0
      : this.lengthOf(range);
  }

  private removeTimer(index: TimerIndexKey): void {
    const slot = this.tables.get(index.table, index.key.key);
    if (slot === undefined) return;
    this.remove('timers', slot);
    this.remove(index.table, index.key.key);
  }

  /** Writes `value` under `key`, and the key's original beside it when a part is hashed. */
  private put(table: TableName, key: StoredKey, value: Buffer): void {
    this.tables.put(table, key.key, value);
    if (key.original) this.tables.put('originals', originalsKey(table, key.key), key.original);
  }

  private remove(table: TableName, key: Buffer): void {
    if (this.tables.remove(table, key) && hasHashedPart(key)) this.tables.remove('originals', originalsKey(table, key));
  }

  private removeRange(table: TableName, range: KeyRange): void {
    for (const key of this.tables.keys(table, range)) this.remove(table, key);
  }

  /** The parts of a stored key, read from its original when a part is hashed. */
  private partsOf(table: string, key: Buffer): KeyPart[] {
    const parts = decodeTuple(key);
    if (!parts.some((part) => part instanceof HashedPart)) return parts as KeyPart[];
    const original = this.tables.get('originals', originalsKey(table, key));
    if (original === undefined) throw new Error(`corrupt store: ${table} holds a hashed key without its original`);
    return decodeTuple(original) as KeyPart[];
  }

  private lengthOf(range: KeyRange): number {
    return this.lastSeq(range) + 1;
  }

  /** The last number of the keys `(…, n)` of table `invocations` in `range`, or -1 when there is none. */
  private lastSeq(range: KeyRange): number {
    const [last] = this.tables.keys('invocations', { ...range, reverse: true, limit: 1 });
    return last === undefined ? -1 : (decodeTuple(last).at(-1) as number);
  }

  /** The files are local: the store is there as long as it is open. */
  async ping(): Promise<void> {}

  async loadInvocation(partition: number, id: string): Promise<unknown | undefined> {
    this.fresh();
    const json = this.tables.get('invocations', invocationKey.snapshot(partition, id).key);
    return json === undefined ? undefined : decodeJson(json);
  }

  /**
   * Steps from one invocation's keys to the next instead of reading its journal and history:
   * one positioned read per invocation.
   */
  async listInvocations(partition: number): Promise<string[]> {
    this.fresh();
    const ids: string[] = [];
    const { end, start: first } = partitionRange(partition);
    let start = first;
    let hashed = false;
    for (;;) {
      const [key] = this.tables.keys('invocations', { start, end, limit: 1 });
      if (key === undefined) break;
      const parts = this.partsOf('invocations', key);
      const id = parts[1] as string;
      // An invocation deleted with timers still indexed has keys but no snapshot.
      if (isSnapshotKey(parts)) {
        ids.push(id);
        hashed ||= hasHashedPart(key);
      }
      start = partitionRange(partition, id).end;
    }
    return hashed ? sortedUtf8(ids) : ids;
  }

  async activeInvocations(partition: number): Promise<string[]> {
    this.fresh();
    return this.keysIn('active', partitionRange(partition), 1);
  }

  async readJournal(partition: number, id: string, from = 0): Promise<JournalEntry[]> {
    this.fresh();
    checkJournalIndex(from);
    const { end } = invocationKey.journalRange(partition, id);
    return this.tables
      .entries('invocations', { start: invocationKey.journal(partition, id, from).key, end })
      .map(({ value }) => decodeEntry(value));
  }

  async journalLength(partition: number, id: string): Promise<number> {
    this.fresh();
    return this.lengthOf(invocationKey.journalRange(partition, id));
  }

  async readHistory(partition: number, id: string): Promise<HistoryEntry[]> {
    this.fresh();
    return this.tables
      .entries('invocations', invocationKey.historyRange(partition, id))
      .map(({ value }) => decodeJson(value) as HistoryEntry);
  }

  async readState(partition: number, service: string, key: string): Promise<Map<string, Uint8Array>> {
    this.fresh();
    const state = new Map<string, Uint8Array>();
    for (const entry of this.tables.entries('state', partitionRange(partition, service, key))) {
      state.set(this.partsOf('state', entry.key)[3] as string, bytesOf(entry.value));
    }
    return state;
  }

  async readStateKey(
    partition: number,
    service: string,
    key: string,
    stateKey: string,
  ): Promise<Uint8Array | undefined> {
    this.fresh();
    const value = this.tables.get('state', partitionKey(partition, service, key, stateKey));
    return value === undefined ? undefined : bytesOf(value);
  }

  async dueTimers(partition: number, upTo: number, limit: number): Promise<Timer[]> {
    this.fresh();
    if (limit <= 0 || Number.isNaN(upTo)) return [];
    const { start } = partitionRange(partition);
    const { end } = partitionRange(partition, upTo);
    return this.tables.keys('timers', { start, end, limit }).map((key) => this.timerOf(key));
  }

  async nextTimer(partition: number): Promise<Timer | undefined> {
    this.fresh();
    const [first] = this.tables.keys('timers', { ...partitionRange(partition), limit: 1 });
    return first === undefined ? undefined : this.timerOf(first);
  }

  async outbox(partition: number): Promise<OutboxMessage[]> {
    this.fresh();
    return this.tables.entries('outbox', partitionRange(partition)).map(({ key, value }) => ({
      id: this.partsOf('outbox', key)[1] as string,
      body: decodeJson(value),
    }));
  }

  async getRecord(partition: number, kind: string, key: string): Promise<unknown | undefined> {
    this.fresh();
    const json = this.tables.get('records', partitionKey(partition, kind, key));
    return json === undefined ? undefined : decodeJson(json);
  }

  async listRecords(partition: number, kind: string): Promise<string[]> {
    this.fresh();
    return this.keysIn('records', partitionRange(partition, kind), 2);
  }

  async loadRegistry(): Promise<unknown | undefined> {
    this.fresh();
    const json = this.tables.get('meta', tupleKey('registry'));
    return json === undefined ? undefined : decodeJson(json);
  }

  async saveRegistry(doc: unknown): Promise<void> {
    const json = Buffer.from(encodeJson(doc, 'registry'));
    await this.write(() => {
      this.tables.put('meta', tupleKey('registry'), json);
    });
  }

  async close(): Promise<void> {
    // Commits handed in this turn are written (and answered), and the log checkpointed, before the files close.
    if (this.pending.length > 0) this.flushPending();
    this.checkpoint();
    this.logging?.log.close();
    await this.root.close();
  }

  /**
   * Part `at` of every key in the range, sorted bytewise on UTF-8 like the Redis store's
   * lists; only hashed keys can be out of that order.
   */
  private keysIn(table: TableName, range: KeyRange, at: number): string[] {
    let hashed = false;
    const out = this.tables.keys(table, range).map((key) => {
      hashed ||= hasHashedPart(key);
      return this.partsOf(table, key)[at] as string;
    });
    return hashed ? sortedUtf8(out) : out;
  }

  private timerOf(key: Buffer): Timer {
    const [, dueAt, timerKey] = this.partsOf('timers', key);
    return { key: timerKey as string, dueAt: dueAt as number };
  }
}

function appendOrStop(log: CommitLog, writes: readonly LoggedWrite[]): void {
  try {
    log.append(writes);
  } catch (err) {
    process.nextTick(() => {
      throw new Error('the commit log could not be written; stopping, the restart reads what it holds', { cause: err });
    });
    throw err;
  }
}

/**
 * Stores in LMDB what the commit log at `path` holds past the last checkpoint (a crash came
 * before its checkpoint), as that checkpoint would have; returns the generation the log's
 * next records take.
 */
function replayCommitLog(root: RootDatabase, db: Tables, path: string): number {
  const stored = db.meta.get(CHECKPOINT_KEY);
  const generation = stored === undefined ? 1 : Number(stored.toString('utf8')) + 1;
  const writes = readCommitLog(path, generation);
  if (writes.length === 0) return generation;
  const known = (write: StoredWrite): write is LoggedWrite => (TABLES as readonly string[]).includes(write.table);
  if (!writes.every(known)) throw new Error(`corrupt commit log: table ${writes.find((w) => !known(w))?.table}`);
  storeCheckpoint(root, db, generation, writes);
  return generation + 1;
}

/**
 * The one synced LMDB transaction of a checkpoint: the writes of the log's records of
 * `generation`, in order, and that generation as the last one stored.
 */
function storeCheckpoint(root: RootDatabase, db: Tables, generation: number, writes: Iterable<LoggedWrite>): void {
  root.transactionSync(() => {
    for (const { table, key, value } of writes) {
      if (value) db[table].putSync(key, value);
      else db[table].removeSync(key);
    }
    db.meta.putSync(CHECKPOINT_KEY, Buffer.from(String(generation)));
  });
}

/** Where the original of a hashed key of `table` is kept. */
function originalsKey(table: string, key: Buffer): Buffer {
  return Buffer.concat([Buffer.from(table), Buffer.of(0), createHash('sha256').update(key).digest()]);
}
