/**
 * A query result, independent of the engine that computed it and of the encoding that sends
 * it (JSON or Arrow IPC, reference-behavior.md §3.6).
 */
import type { ColumnType } from './tables.js';

/**
 * The table column types, plus what expressions produce: signed integers (`COUNT` is Int64,
 * integer literals are Int64 in DataFusion) and floats.
 */
export type ValueType = ColumnType | 'i64' | 'f64';

/**
 * One column. Values are `null` or, by type: utf8 string; u64/i64 bigint; u32 number;
 * f64 number; bool boolean; ts epoch ms; dur ms; bin Uint8Array; list_u32 number[];
 * list_utf8 string[].
 */
export interface ResultColumn {
  name: string;
  type: ValueType;
  nullable: boolean;
  values: unknown[];
}

export interface ResultSet {
  columns: ResultColumn[];
  rowCount: number;
}

/** A row handed to the engine: column name → value (as above); missing means NULL. */
export type Row = Record<string, unknown>;
