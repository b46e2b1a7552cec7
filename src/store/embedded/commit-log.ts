/**
 * The embedded store's commit log: each group commit is one record appended and synced
 * (`fdatasync`) before its commits are answered; LMDB receives the same writes later, many
 * groups in one synced transaction (a checkpoint, ./embedded-store.ts). After a crash the
 * records not yet checkpointed are written into LMDB before the store serves
 * (`replayCommitLog`).
 *
 * Why: a synced LMDB transaction costs two `fdatasync`s (data pages, then the meta page) and
 * copies every B-tree page it touches; an append to a file whose blocks exist already costs
 * one `fdatasync` that writes no metadata. The file is preallocated once (`LOG_BYTES` of
 * zeros) and written again from its start after each checkpoint.
 *
 * A record: u32 payload length, u32 CRC-32 of the rest, f64 generation, payload. The
 * generation is the number of the checkpoint the record waits for (LMDB keeps the number of
 * the last one, in the same transaction as its writes): a record of an older generation, left
 * in the file past the newest records, is never read as new. The payload is the group's
 * writes in order: u8 kind (1 put, 0 remove), u8 table name length, table name, u16 key
 * length, key, and for a put u32 value length and value.
 */
import { closeSync, existsSync, fdatasyncSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import type { TableName } from './tables.js';

/** The file's preallocated size; past half of it the store checkpoints (a larger group still fits). */
export const LOG_BYTES = 16 * 2 ** 20;
const HEADER = 16;
/** Records up to this size are built in the log's one buffer; larger ones in their own. */
const SCRATCH_MAX = 2 ** 20;
const PUT = 1;
const REMOVE = 0;

export interface LoggedWrite {
  table: TableName;
  key: Buffer;
  /** null: removed. */
  value: Buffer | null;
}

/** A write read back from the log: its table is a name the caller checks. */
export interface StoredWrite {
  table: string;
  key: Buffer;
  value: Buffer | null;
}

export class CommitLog {
  private offset = 0;
  private scratch = Buffer.allocUnsafe(64 * 1024);

  private constructor(
    private readonly fd: number,
    private writing: number,
  ) {}

  /** Opens (creating and preallocating if needed) the log at `path`, to write records of `generation`. */
  static open(path: string, generation: number): CommitLog {
    const created = !existsSync(path);
    const fd = openSync(path, created ? 'w+' : 'r+');
    if (fstatSync(fd).size < LOG_BYTES) {
      const zeros = Buffer.alloc(2 ** 20);
      for (let at = 0; at < LOG_BYTES; at += zeros.length) writeSync(fd, zeros, 0, zeros.length, at);
      fdatasyncSync(fd);
    }
    if (created) syncDirectory(dirname(path));
    return new CommitLog(fd, generation);
  }

  /** The generation of the records it writes now: the next checkpoint's. */
  get generation(): number {
    return this.writing;
  }

  /** Bytes written since the last checkpoint. */
  get size(): number {
    return this.offset;
  }

  /** Appends the writes of one group and syncs them; throws when they may not be on disk. */
  append(writes: readonly LoggedWrite[]): void {
    const size = recordSize(writes);
    // One buffer for the records of ordinary size, not a new one per group: each would be
    // memory outside V8's heap that it counts towards its next collection.
    if (size > this.scratch.length && size <= SCRATCH_MAX) this.scratch = Buffer.allocUnsafe(SCRATCH_MAX);
    const record = size <= this.scratch.length ? this.scratch : Buffer.allocUnsafe(size);
    encodeRecord(writes, this.writing, record);
    writeSync(this.fd, record, 0, size, this.offset);
    fdatasyncSync(this.fd);
    this.offset += size;
  }

  /** A checkpoint stored everything written so far: the next records start the file again. */
  restart(generation: number): void {
    this.writing = generation;
    this.offset = 0;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The writes of the records of `generation` at the start of the log at `path`, in order: those
 * of the groups committed after the last checkpoint. Reading stops at the first record that
 * is torn, of another generation, or zeros.
 */
export function readCommitLog(path: string, generation: number): StoredWrite[] {
  if (!existsSync(path)) return [];
  // Record by record, not the whole file: after a clean stop the log holds nothing to replay,
  // and 16 MiB read at every start would stay in the process's RSS until malloc gives it back.
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const header = Buffer.alloc(HEADER);
    const writes: StoredWrite[] = [];
    let at = 0;
    while (at + HEADER <= size) {
      readSync(fd, header, 0, HEADER, at);
      const length = header.readUInt32LE(0);
      const end = at + HEADER + length;
      if (length === 0 || end > size || header.readDoubleLE(8) !== generation) break;
      const record = Buffer.allocUnsafe(HEADER + length);
      readSync(fd, record, 0, record.length, at);
      if (crc32(record.subarray(8)) !== header.readUInt32LE(4)) break;
      decodePayload(record.subarray(HEADER), writes);
      at = end;
    }
    return writes;
  } finally {
    closeSync(fd);
  }
}

function recordSize(writes: readonly LoggedWrite[]): number {
  let size = HEADER;
  for (const { table, key, value } of writes) size += 4 + table.length + key.length + (value ? 4 + value.length : 0);
  return size;
}

/** Writes the record of `writes` at the start of `record`, which is at least `recordSize` long. */
function encodeRecord(writes: readonly LoggedWrite[], generation: number, record: Buffer): void {
  record.writeDoubleLE(generation, 8);
  let at = HEADER;
  for (const { table, key, value } of writes) {
    record[at] = value ? PUT : REMOVE;
    const nameLength = record.write(table, at + 2, 'latin1');
    record[at + 1] = nameLength;
    at += 2 + nameLength;
    record.writeUInt16LE(key.length, at);
    at += 2 + key.copy(record, at + 2);
    if (value) {
      record.writeUInt32LE(value.length, at);
      at += 4 + value.copy(record, at + 4);
    }
  }
  record.writeUInt32LE(at - HEADER, 0);
  record.writeUInt32LE(crc32(record.subarray(8, at)), 4);
}

function decodePayload(payload: Buffer, into: StoredWrite[]): void {
  let at = 0;
  while (at < payload.length) {
    const kind = payload.readUInt8(at);
    const nameLength = payload.readUInt8(at + 1);
    const table = payload.toString('latin1', at + 2, at + 2 + nameLength);
    at += 2 + nameLength;
    const keyLength = payload.readUInt16LE(at);
    const key = Buffer.from(payload.subarray(at + 2, at + 2 + keyLength));
    at += 2 + keyLength;
    if (kind === PUT) {
      const valueLength = payload.readUInt32LE(at);
      into.push({ table, key, value: Buffer.from(payload.subarray(at + 4, at + 4 + valueLength)) });
      at += 4 + valueLength;
    } else into.push({ table, key, value: null });
  }
}

/** A new file's name is durable once its directory is synced. */
function syncDirectory(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
