/**
 * The store: transition-level operations over one partition at a time.
 *
 * Every change the runtime makes is one `Transition`, committed atomically (one Lua script
 * in Redis, one write transaction in the embedded store). A commit either lands whole or not
 * at all, so a crash leaves the old or the new state, never a mix (design.md, "The invariant").
 *
 * Keys of one partition live together (Redis hash tag `{pN}`), so a transition never spans
 * partitions; work that lands in another partition travels through the outbox.
 */
import { Unavailable } from '../errors.js';

/** One journal entry exactly as the service protocol carries it: message type id + protobuf payload. */
export interface JournalEntry {
  type: number;
  payload: Uint8Array;
  /** Epoch ms at which the entry was stored (sys_journal.appended_at); kept by the store, never sent to the SDK. */
  appendedAt?: number;
}

/** Names a durable timer. */
export interface TimerRef {
  /** Unique within its partition; the runtime encodes what the timer is for in it (src/model/timers.ts). */
  key: string;
  /**
   * The invocation the timer belongs to, if any: a store may keep the timer's index beside that
   * invocation's data (the embedded store does). Removing a timer names the same owner as adding it.
   */
  owner?: string;
}

/** A durable timer: delivered to the runtime when `dueAt` (epoch ms) has passed. */
export interface Timer extends TimerRef {
  dueAt: number;
}

/** One write to a virtual object's / workflow's state. */
export type StateOp = { op: 'set'; key: string; value: Uint8Array } | { op: 'clear'; key: string } | { op: 'clearAll' };

/** A message waiting to be delivered to (possibly) another partition. */
export interface OutboxMessage {
  id: string;
  /** JSON-serialisable body; the runtime gives it meaning. */
  body: unknown;
}

/**
 * Namespaced small records of a partition (idempotency index, object-key actors, workflow
 * actors, durable promises, ...). `value: null` deletes.
 */
export interface RecordWrite {
  kind: string;
  key: string;
  value: unknown | null;
  /**
   * Compare-and-set: the record must hold exactly this value now (`null`: must be absent), or
   * the whole transition is refused with `TransitionConflict`. A writer whose view may be
   * stale (it lost a commit's reply) can then never overwrite what another commit stored.
   */
  expect?: unknown | null;
}

export interface InvocationWrite {
  id: string;
  /** The persisted XState snapshot of machines/invocation.ts; JSON-serialisable. */
  snapshot: unknown;
  /** Whether the invocation is non-terminal (kept in the partition's active index). */
  active: boolean;
}

/**
 * One committed transition of an invocation's machine, for its history (design.md,
 * "Visualisation"): the path it took, not only where it is.
 */
export interface HistoryEntry {
  /** The state before; null for the initial entry. */
  from: string | null;
  /** The machine event's type; `xstate.init` for the initial entry. */
  event: string;
  to: string;
  /** Epoch ms of the event. */
  at: number;
  /** The invocation's retry count at that moment. */
  attempt: number;
  /** What the attempt failed with, on `attemptFailed` entries: every failure, not only the last. */
  failure?: HistoryFailure;
}

/** An attempt's failure as the history keeps it. */
export interface HistoryFailure {
  code: number;
  message: string;
  stacktrace?: string;
  /** The command the SDK was at (its index among the commands), when it said. */
  relatedCommandIndex?: number;
  relatedCommandName?: string;
  /** Restate's doc code of the failure kind, e.g. RT0007. */
  errorCode?: string;
}

/** A store keeps only the last this many history entries of an invocation. */
export const HISTORY_LIMIT = 200;

export interface JournalAppend {
  id: string;
  /** The journal length this append expects to find; a mismatch rejects the whole commit. */
  at: number;
  entries: JournalEntry[];
}

/**
 * Parts are applied in this order, so that a transition may delete and recreate an id, or
 * remove and re-add a timer / outbox message, with a defined result:
 * `deleteInvocations`, `journal` (in array order; a second append to the same id expects the
 * length left by the first; a journal deleted just before counts as empty), record
 * expectations (`RecordWrite.expect`, against what is stored before this transition), `invocations`,
 * `state` (groups and ops in order), `timersRemove`, `timersAdd` (adding an existing key moves
 * it), `outboxRemove`, `outboxAdd`, `records` (in order), `history` (in order; then only the last
 * `HISTORY_LIMIT` entries of each id are kept). Every `at` is checked before anything is
 * written.
 *
 * Snapshots, history entries, outbox bodies, records and the registry are stored as JSON text by every
 * backend and read back through `JSON.parse`.
 */
export interface Transition {
  partition: number;
  invocations?: InvocationWrite[];
  /** Removes invocation snapshots, their journals, histories and index entries. */
  deleteInvocations?: string[];
  journal?: JournalAppend[];
  state?: Array<{ service: string; key: string; ops: StateOp[] }>;
  timersAdd?: Timer[];
  timersRemove?: TimerRef[];
  outboxAdd?: OutboxMessage[];
  outboxRemove?: string[];
  records?: RecordWrite[];
  history?: Array<{ id: string; entries: HistoryEntry[] }>;
  /**
   * Nobody waits for this commit soon (an invocation that joins its key's inbox): the store may
   * hold it back, at most `LAZY_COMMIT_MS`, to write it with the next commit, one fsync for both.
   */
  lazy?: boolean;
}

/** How long a `lazy` commit may wait for another one to share its fsync. */
export const LAZY_COMMIT_MS = 2;

/** Thrown by `commit` when a journal append finds another length, or a record another value, than expected. */
export class TransitionConflict extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransitionConflict';
  }
}

/**
 * The store cannot be reached: Redis is down, the connection broke, a command got no reply in
 * time. Nothing is wrong with the request; it can be retried once the store is back.
 *
 * `mayHaveApplied` is false when the command was refused before it was sent (a read, or a
 * commit issued while the store was known to be down: nothing changed). It is true when a
 * commit was sent and its reply was lost: the outcome is unknown, the transition may have
 * landed, and it must be resolved by reading the store again, never reported as not applied.
 */
export class StoreUnavailable extends Unavailable {
  constructor(
    message: string,
    readonly mayHaveApplied: boolean,
    options?: ErrorOptions,
  ) {
    super(message);
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * A commit refused because this node does not hold the partition's lease (any more): it was
 * never held, it was dropped, it ran out before it could be renewed, or another node acquired
 * the partition since (its fencing epoch moved on). Nothing was written. The partition's work
 * belongs to its current owner; whoever tried this commit must let it go, not retry it here.
 */
export class Fenced extends StoreUnavailable {
  constructor(
    readonly partition: number,
    reason: string,
  ) {
    super(`partition ${partition} is not held by this node (${reason}); its current owner does its work`, false);
  }
}

/** A partition's lease as the coordinator holds it (`sys_partitions`). */
export interface LeaseInfo {
  partition: number;
  /** Undefined when nobody holds the lease. */
  nodeId: string | undefined;
  /** The fencing epoch: raised by every acquisition, checked by every commit. 0 before the first. */
  epoch: number;
  /** Epoch ms at which the lease runs out unless renewed; undefined when nobody holds it. */
  expiresAt: number | undefined;
}

/** A live node as it announces itself to the others (the node registry). */
export interface NodeInfo {
  nodeId: string;
  /** Base URL of its node port, where the other nodes reach it. */
  node: string;
  /** Epoch ms of its last heartbeat, by the coordinator's clock. */
  seenAt?: number;
}

/**
 * What several nodes sharing one store coordinate through (design.md, "Scaling past one
 * machine"): the partition count fixed with the store, a node registry with heartbeats, and
 * per-partition leases with a fencing epoch that every commit of the partition is checked
 * against. Only stores several processes can share have one.
 */
export interface Coordination {
  /** Stores `count` when the store has none yet; answers the count the store was created with. */
  fixPartitionCount(count: number): Promise<number>;
  /** Announces the node for `ttlMs`; answers the nodes alive now (this one included), sorted by id. */
  heartbeat(node: NodeInfo, ttlMs: number): Promise<NodeInfo[]>;
  /** Takes the node out of the registry at once (a graceful stop). */
  leave(nodeId: string): Promise<void>;
  /**
   * Acquires the partition's lease for `ttlMs` when it is free or already this node's (a
   * restarted process of the same node id takes over); answers the new fencing epoch, or
   * undefined when another node holds it.
   */
  acquire(partition: number, nodeId: string, ttlMs: number): Promise<number | undefined>;
  /** Extends the lease when the node still holds it at `epoch`; false when it does not. */
  renew(partition: number, nodeId: string, epoch: number, ttlMs: number): Promise<boolean>;
  /** Gives the lease up (only the holder at `epoch` can). */
  release(partition: number, nodeId: string, epoch: number): Promise<void>;
  /** Every partition's lease, partition 0 first. */
  leases(partitions: number): Promise<LeaseInfo[]>;
  /** The partitions this node holds, at which epoch and until when: what its commits are fenced by (./tenure.ts). */
  readonly tenure: PartitionTenure;
}

/**
 * The one view of which partitions this node holds (./tenure.ts `Tenure`): the cluster node
 * holds, renews and drops them; the runtime asks; the store's commits are fenced by it.
 */
export interface PartitionTenure {
  /**
   * From now on the partition is this node's at `epoch` (its commits carry it), and until
   * `validUntil` (`performance.now()` time) only: past it its commits wait until the lease is
   * renewed (held again) or dropped, and are refused without reaching the store unless it is
   * renewed. Once any partition was held, commits of partitions not held are refused.
   */
  hold(partition: number, epoch: number, validUntil: number): void;
  /** Not this node's any more: refused from now on; resolves once its commits already sent have settled. */
  drop(partition: number): Promise<void>;
  /** Whether this node holds the partition's lease (as far as it knows: its validity may have passed). */
  has(partition: number): boolean;
  /** Whether this node may act on the partition now: drive its attempts, commit without waiting (held, and within its validity). */
  holds(partition: number): boolean;
  /** The epoch the partition is held at; undefined when it is not held. */
  epochOf(partition: number): number | undefined;
  /** Held partitions whose validity has passed by `now` (`performance.now()` time). */
  lapsed(now: number): number[];
  /** The held partitions, in order. */
  partitions(): number[];
}

export interface StoreInfo {
  backend: 'redis' | 'embedded';
  /** Where the data lives: a redis URL (password stripped) or a directory. */
  location: string;
  /** One line each, for settings under which acknowledged work could be lost or evicted. */
  warnings: string[];
  /** Files the store maps read-only into this process (LMDB's data file), whose resident pages idle-release.ts may drop. */
  mappedFiles?: string[];
}

export interface Store {
  readonly info: StoreInfo;
  /** Present on stores several nodes can share (Redis); the embedded store is one node's alone. */
  readonly coordination?: Coordination;

  /**
   * Applies the whole transition atomically and durably (as durable as the backend is set up).
   * Rejects with `TransitionConflict` (a journal length or a record expectation did not hold)
   * when nothing was written, with `StoreUnavailable` when the store cannot be reached (its
   * `mayHaveApplied` tells whether the transition may have landed). Any other rejection is
   * ambiguous too: reload from the store before retrying.
   */
  commit(transition: Transition): Promise<void>;

  /** Resolves when the store answers now (readiness); rejects with `StoreUnavailable` otherwise. */
  ping(): Promise<void>;

  loadInvocation(partition: number, id: string): Promise<unknown | undefined>;
  /** Ids of every invocation in the partition, terminal or not. Lists are sorted bytewise on UTF-8. */
  listInvocations(partition: number): Promise<string[]>;
  /** Ids of the partition's non-terminal invocations. */
  activeInvocations(partition: number): Promise<string[]>;

  /** Journal entries from index `from` (inclusive) to the end. */
  readJournal(partition: number, id: string, from?: number): Promise<JournalEntry[]>;
  journalLength(partition: number, id: string): Promise<number>;
  /** The kept history of an invocation (at most `HISTORY_LIMIT` entries), oldest first. */
  readHistory(partition: number, id: string): Promise<HistoryEntry[]>;

  /** The whole state of one object / workflow key. */
  readState(partition: number, service: string, key: string): Promise<Map<string, Uint8Array>>;
  readStateKey(partition: number, service: string, key: string, stateKey: string): Promise<Uint8Array | undefined>;

  /** Timers due at or before `upTo`, earliest first (ties by key, bytewise on UTF-8); keys and times, not owners. */
  dueTimers(partition: number, upTo: number, limit: number): Promise<Timer[]>;
  /** The earliest timer of the partition, if any. */
  nextTimer(partition: number): Promise<Timer | undefined>;

  /** Pending messages, ordered by id (bytewise on UTF-8); put a sequence in ids for FIFO. */
  outbox(partition: number): Promise<OutboxMessage[]>;

  getRecord(partition: number, kind: string, key: string): Promise<unknown | undefined>;
  /** Keys of every record of a kind in the partition. */
  listRecords(partition: number, kind: string): Promise<string[]>;

  /** The deployment/service registry: one small global document. */
  loadRegistry(): Promise<unknown | undefined>;
  saveRegistry(doc: unknown): Promise<void>;

  close(): Promise<void>;
}
