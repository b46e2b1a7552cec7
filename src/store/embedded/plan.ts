/**
 * Turns a transition into the keys and bytes the embedded store writes, before the write
 * transaction starts: encoding errors then surface to the caller without opening a
 * transaction, and the write lock is held only for the puts and removes themselves.
 */
import { checkPartition, encodeEntry, encodeJson } from '../codec.js';
import type { TimerRef, Transition } from '../types.js';
import { prefixRange, storedKey, tupleKey, type KeyPart, type StoredKey } from './tuple.js';

export interface KeyRange {
  start: Buffer;
  end: Buffer;
}

export type StatePlan =
  | { kind: 'set'; key: StoredKey; value: Buffer }
  | { kind: 'clear'; key: Buffer }
  | { kind: 'clearAll'; range: KeyRange };

/** Where a timer's index entry lives: beside its invocation when it has an owner (types.ts `TimerRef`). */
export interface TimerIndexKey {
  table: 'invocations' | 'timerIndex';
  key: StoredKey;
}

export interface Plan {
  deletes: Array<{ id: string; snapshot: Buffer; active: Buffer; journal: KeyRange; history: KeyRange }>;
  /** `entries` are keyed from `at` on: they are only written once the length is `at`. */
  appends: Array<{ id: string; at: number; range: KeyRange; entries: Array<[StoredKey, Buffer]> }>;
  invocations: Array<{ id: string; key: StoredKey; json: Buffer; active: boolean }>;
  state: StatePlan[];
  timersRemove: TimerIndexKey[];
  timersAdd: Array<{ index: TimerIndexKey; slot: StoredKey }>;
  outboxRemove: Buffer[];
  outboxAdd: Array<{ key: StoredKey; json: Buffer }>;
  records: Array<{ key: StoredKey; json: Buffer | null }>;
  /** Record expectations: the stored value must be exactly `json` (null: absent). */
  expects: Array<{ key: Buffer; json: Buffer | null }>;
  /** Keyed only once the history's last sequence number is known, inside the transaction. */
  history: Array<{ id: string; entries: Buffer[] }>;
}

/** A key of partition `p`; every table's keys start with the partition. */
export function partitionKey(p: number, ...parts: KeyPart[]): Buffer {
  checkPartition(p);
  return tupleKey(p, ...parts);
}

/** `partitionKey`, with the original a hashed key needs when it is written (tuple.ts). */
export function storedPartitionKey(p: number, ...parts: KeyPart[]): StoredKey {
  checkPartition(p);
  return storedKey(p, ...parts);
}

export function partitionRange(p: number, ...parts: KeyPart[]): KeyRange {
  checkPartition(p);
  return prefixRange(p, ...parts);
}

/**
 * Keys of table `invocations` after `(p, id)`, which is the snapshot's key. An invocation's
 * snapshot, journal, history and timer index sort side by side, so that a commit touching one
 * invocation dirties one or two B-tree leaves instead of one per table: in a synthetic group
 * commit of 28 no-op calls' transitions over 20,000 stored invocations, this wrote 296 KiB
 * instead of 767 KiB and took 2.4 ms instead of 5.0-8.9 ms (2 commits: 0.7 ms against 1.2 ms).
 */
const JOURNAL = 1;
const HISTORY = 2;
const TIMER = 3;

export const invocationKey = {
  snapshot: (p: number, id: string) => storedPartitionKey(p, id),
  journal: (p: number, id: string, index: number) => storedPartitionKey(p, id, JOURNAL, index),
  journalRange: (p: number, id: string) => partitionRange(p, id, JOURNAL),
  history: (p: number, id: string, seq: number) => storedPartitionKey(p, id, HISTORY, seq),
  historyRange: (p: number, id: string) => partitionRange(p, id, HISTORY),
};

/** The snapshot key is the only key of table `invocations` with two parts. */
export function isSnapshotKey(parts: readonly unknown[]): boolean {
  return parts.length === 2;
}

export function timerIndexKey(p: number, timer: TimerRef): TimerIndexKey {
  return timer.owner === undefined
    ? { table: 'timerIndex', key: storedPartitionKey(p, timer.key) }
    : { table: 'invocations', key: storedPartitionKey(p, timer.owner, TIMER, timer.key) };
}

export function planTransition(t: Transition): Plan {
  const p = t.partition;
  const json = (value: unknown, what: string) => Buffer.from(encodeJson(value, what), 'utf8');
  return {
    deletes: (t.deleteInvocations ?? []).map((id) => ({
      id,
      snapshot: invocationKey.snapshot(p, id).key,
      active: partitionKey(p, id),
      journal: invocationKey.journalRange(p, id),
      history: invocationKey.historyRange(p, id),
    })),
    appends: (t.journal ?? []).map((append) => ({
      id: append.id,
      at: append.at,
      range: invocationKey.journalRange(p, append.id),
      entries: append.entries.map((entry, i): [StoredKey, Buffer] => [
        invocationKey.journal(p, append.id, append.at + i),
        encodeEntry(entry),
      ]),
    })),
    invocations: (t.invocations ?? []).map((inv) => ({
      id: inv.id,
      key: invocationKey.snapshot(p, inv.id),
      json: json(inv.snapshot, `snapshot of ${inv.id}`),
      active: inv.active,
    })),
    state: (t.state ?? []).flatMap((group) =>
      group.ops.map((op): StatePlan => {
        if (op.op === 'set')
          return {
            kind: 'set',
            key: storedPartitionKey(p, group.service, group.key, op.key),
            value: Buffer.from(op.value),
          };
        if (op.op === 'clear') return { kind: 'clear', key: partitionKey(p, group.service, group.key, op.key) };
        return { kind: 'clearAll', range: partitionRange(p, group.service, group.key) };
      }),
    ),
    timersRemove: (t.timersRemove ?? []).map((timer) => timerIndexKey(p, timer)),
    timersAdd: (t.timersAdd ?? []).map((timer) => ({
      index: timerIndexKey(p, timer),
      slot: storedPartitionKey(p, timer.dueAt, timer.key),
    })),
    outboxRemove: (t.outboxRemove ?? []).map((id) => partitionKey(p, id)),
    outboxAdd: (t.outboxAdd ?? []).map((msg) => ({
      key: storedPartitionKey(p, msg.id),
      json: json(msg.body, `outbox message ${msg.id}`),
    })),
    records: (t.records ?? []).map((rec) => ({
      key: storedPartitionKey(p, rec.kind, rec.key),
      json: rec.value === null || rec.value === undefined ? null : json(rec.value, `record ${rec.kind}/${rec.key}`),
    })),
    expects: (t.records ?? [])
      .filter((rec) => rec.expect !== undefined)
      .map((rec) => ({
        key: partitionKey(p, rec.kind, rec.key),
        json: rec.expect === null ? null : json(rec.expect, `expected record ${rec.kind}/${rec.key}`),
      })),
    history: (t.history ?? []).map((h) => ({
      id: h.id,
      entries: h.entries.map((e) => json(e, `history entry of ${h.id}`)),
    })),
  };
}
