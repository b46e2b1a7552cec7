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
import { closeSync, fdatasyncSync, fstatSync, openSync, readFileSync, writeSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import type { TableName } from './tables.js';

/** The file's preallocated size; past half of it the store checkpoints (a larger group still fits). */
export const LOG_BYTES = 16 * 2 ** 20;
const HEADER = 16;
const PUT = 1;
const REMOVE = 0;

export interface LoggedWrite {
  table: TableName;
  key: Buffer;
  /** null: removed. */
  value: Buffer | null;
}

export class CommitLog {
  private offset = 0;

  private constructor(
    private readonly fd: number,
    private generation: number,
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

  /** Bytes written since the last checkpoint. */
  get size(): number {
    return this.offset;
  }

  /** Appends the writes of one group and syncs them; throws when they may not be on disk. */
  append(writes: readonly LoggedWrite[]): void {
    const record = encodeRecord(writes, this.generation);
    writeSync(this.fd, record, 0, record.length, this.offset);
    fdatasyncSync(this.fd);
    this.offset += record.length;
  }

  /** A checkpoint stored everything written so far: the next records start the file again. */
  restart(generation: number): void {
    this.generation = generation;
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
export function readCommitLog(
  path: string,
  generation: number,
): Array<{ table: string; key: Buffer; value: Buffer | null }> {
  if (!existsSync(path)) return [];
  const file = readFileSync(path);
  const writes: LoggedWrite[] = [];
  let at = 0;
  while (at + HEADER <= file.length) {
    const length = file.readUInt32LE(at);
    const end = at + HEADER + length;
    if (length === 0 || end > file.length) break;
    if (file.readDoubleLE(at + 8) !== generation) break;
    if (crc32(file.subarray(at + 8, end)) !== file.readUInt32LE(at + 4)) break;
    decodePayload(file.subarray(at + HEADER, end), writes);
    at = end;
  }
  return writes;
}

function encodeRecord(writes: readonly LoggedWrite[], generation: number): Buffer {
  let size = HEADER;
  for (const { table, key, value } of writes) size += 4 + table.length + key.length + (value ? 4 + value.length : 0);
  const record = Buffer.allocUnsafe(size);
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
  record.writeUInt32LE(size - HEADER, 0);
  record.writeUInt32LE(crc32(record.subarray(8)), 4);
  return record;
}

function decodePayload(payload: Buffer, into: Array<{ table: string; key: Buffer; value: Buffer | null }>): void {
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
