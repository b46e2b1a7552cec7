/**
 * Encodings and checks shared by both store backends, so that Redis and the embedded store
 * hold byte-identical values and reject the same malformed transitions.
 */
import type { JournalEntry, Transition } from './types.js';

/**
 * A journal entry on disk: the mark `00 01`, the time it was appended (8-byte big-endian epoch
 * ms, 0 for none), the 2-byte big-endian message type id, then the payload unchanged.
 * Entries stored before appended times were kept have no mark (type id, then payload): the
 * runtime never journals a control message (types below 0x0400), so no such entry begins
 * with `00 01`.
 */
const TIMED = 0x0001;
const TIMED_HEADER = 2 + 8 + 2;

export function encodeEntry(entry: JournalEntry): Buffer {
  const out = Buffer.allocUnsafe(TIMED_HEADER + entry.payload.byteLength);
  out.writeUInt16BE(TIMED, 0);
  out.writeBigUInt64BE(BigInt(entry.appendedAt ?? 0), 2);
  out.writeUInt16BE(entry.type, 10);
  out.set(entry.payload, TIMED_HEADER);
  return out;
}

export function decodeEntry(stored: Uint8Array): JournalEntry {
  if (stored.byteLength < 2) throw new Error(`corrupt journal entry: ${stored.byteLength} bytes`);
  const head = (stored[0]! << 8) | stored[1]!;
  if (head !== TIMED) return { type: head, payload: bytesOf(stored.subarray(2)) };
  if (stored.byteLength < TIMED_HEADER) throw new Error(`corrupt journal entry: ${stored.byteLength} bytes`);
  const view = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
  const appendedAt = Number(view.getBigUint64(2));
  return {
    type: view.getUint16(10),
    payload: bytesOf(stored.subarray(TIMED_HEADER)),
    ...(appendedAt > 0 ? { appendedAt } : {}),
  };
}

/**
 * A plain Uint8Array view (no copy) of what a driver returned. Both backends hand back the
 * same type, so callers and deep-equality tests never see Buffer on one and not the other.
 */
export function bytesOf(data: Uint8Array): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Snapshots, records, outbox bodies and the registry are stored as JSON text in both
 * backends, so a value reads back the same (JSON semantics) whichever backend holds it.
 */
export function encodeJson(value: unknown, what: string): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`${what} is not JSON-serialisable`);
  return text;
}

export function decodeJson(text: string | Uint8Array): unknown {
  return JSON.parse(
    typeof text === 'string' ? text : Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('utf8'),
  );
}

/**
 * Orders ids the way both backends store them: bytewise on UTF-8 (Redis compares members
 * with memcmp; the embedded store's keys are UTF-8 based), not JavaScript's UTF-16 order.
 */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The order `Coordination.heartbeat` answers its live nodes in, on both backends. */
export function byNodeId(a: { nodeId: string }, b: { nodeId: string }): number {
  return a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0;
}

export function sortedUtf8(ids: Iterable<string>): string[] {
  return [...ids].sort(compareUtf8);
}

export function checkPartition(partition: number): void {
  if (!Number.isSafeInteger(partition) || partition < 0) {
    throw new RangeError(`partition must be a non-negative integer, got ${partition}`);
  }
}

export function checkJournalIndex(from: number): void {
  if (!Number.isSafeInteger(from) || from < 0) {
    throw new RangeError(`journal index must be a non-negative integer, got ${from}`);
  }
}

/**
 * Rejects a malformed transition before anything is sent or written, so that a backend never
 * has to undo half a transition because of a bad argument.
 */
export function checkTransition(t: Transition): void {
  checkPartition(t.partition);
  for (const append of t.journal ?? []) {
    if (!Number.isSafeInteger(append.at) || append.at < 0) {
      throw new RangeError(`journal append for ${append.id}: 'at' must be a non-negative integer, got ${append.at}`);
    }
    for (const entry of append.entries) {
      if (!Number.isInteger(entry.type) || entry.type < 0 || entry.type > 0xffff) {
        throw new RangeError(`journal entry type must fit in 16 bits, got ${entry.type}`);
      }
    }
  }
  for (const timer of t.timersAdd ?? []) {
    if (!Number.isFinite(timer.dueAt)) throw new RangeError(`timer ${timer.key}: dueAt must be finite`);
  }
}

/** Message of a record expectation that did not hold, the same for both backends. */
export function recordConflictMessage(t: Transition, expectIndex: number): string {
  const rec = (t.records ?? []).filter((r) => r.expect !== undefined)[expectIndex];
  return `partition ${t.partition}: record ${rec?.kind}/${rec?.key} no longer holds what the transition expected`;
}

/** Message of the `TransitionConflict` both backends throw, so logs read the same. */
export function conflictMessage(t: Transition, appendIndex: number, found: number): string {
  const append = t.journal?.[appendIndex];
  return `partition ${t.partition}: journal of ${append?.id} has length ${found}, transition expected ${append?.at}`;
}
