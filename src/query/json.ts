/**
 * The JSON form of a query result, as Restate's arrow-json writer prints it
 * (reference-behavior.md §3.6): `{"rows":[{…},…]}`, NULL columns left out, timestamps
 * RFC 3339 in UTC with `Z` and only the sub-second digits there are, durations ISO 8601
 * (`PT86400S`, `P0D`, `PT0.004S`), binary as lowercase hex, lists as arrays, and 64-bit
 * integers as plain JSON numbers even past 2^53 (partition keys are).
 */
import { Readable } from 'node:stream';
import type { ResultSet, ValueType } from './result.js';
import { rfc3339Auto } from '../timestamps.js';

/** chrono's ISO 8601 display of a duration: seconds only, trailing zeros of the fraction trimmed. */
export function formatDuration(ms: number): string {
  if (ms === 0) return 'P0D';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  const seconds = Math.floor(abs / 1000);
  const millis = abs % 1000;
  const fraction = millis === 0 ? '' : `.${String(millis).padStart(3, '0').replace(/0+$/, '')}`;
  return `${sign}PT${seconds}${fraction}S`;
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** A cell's JSON value; 64-bit integers stay bigint, which the encodings write as plain digits. */
function jsonValue(type: ValueType, v: unknown): unknown {
  switch (type) {
    case 'u64':
    case 'i64':
      return v;
    case 'u32':
    case 'f64':
      // arrow-json writes non-finite floats as null.
      return Number.isFinite(v) ? v : null;
    case 'ts':
      return rfc3339Auto(v as number);
    case 'dur':
      return formatDuration(v as number);
    case 'bin':
      return toHex(v as Uint8Array);
    case 'bool':
    case 'list_u32':
    case 'list_utf8':
    case 'utf8':
      return v;
  }
}

function scalar(type: ValueType, v: unknown): string {
  const value = jsonValue(type, v);
  return typeof value === 'bigint' ? String(value) : JSON.stringify(value);
}

/**
 * The rows of the JSON answer as objects (NULL columns left out), for callers that hand them
 * on as values (src/mcp/): a 64-bit integer past 2^53 becomes its decimal string, as JSON
 * numbers cannot hold it.
 */
export function resultRows(result: ResultSet): Array<Record<string, unknown>> {
  const rows: Array<Record<string, unknown>> = [];
  for (let r = 0; r < result.rowCount; r++) {
    const row: Record<string, unknown> = {};
    for (const col of result.columns) {
      const v = col.values[r];
      if (v === null || v === undefined) continue;
      const value = jsonValue(col.type, v);
      row[col.name] =
        typeof value !== 'bigint'
          ? value
          : value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
            ? Number(value)
            : String(value);
    }
    rows.push(row);
  }
  return rows;
}

/** Rows per piece of the streamed answer. */
const PIECE_ROWS = 1000;

/** `{"rows":[…]}` in pieces of rows, so no single string holds the whole answer. */
function* jsonPieces(result: ResultSet): Generator<string> {
  const keys = result.columns.map((c) => JSON.stringify(c.name));
  const row = (r: number): string => {
    const members: string[] = [];
    result.columns.forEach((col, i) => {
      const v = col.values[r];
      if (v !== null && v !== undefined) members.push(`${keys[i]}:${scalar(col.type, v)}`);
    });
    return `{${members.join(',')}}`;
  };
  yield '{"rows":[';
  for (let from = 0; from < result.rowCount; from += PIECE_ROWS) {
    const rows: string[] = [];
    for (let r = from; r < Math.min(result.rowCount, from + PIECE_ROWS); r++) rows.push(row(r));
    yield (from === 0 ? '' : ',') + rows.join(',');
  }
  yield ']}';
}

export function encodeJson(result: ResultSet): string {
  return [...jsonPieces(result)].join('');
}

export function jsonStream(result: ResultSet): Readable {
  return Readable.from(jsonPieces(result));
}
