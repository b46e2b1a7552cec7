/**
 * Between our column types and DuckDB's: the SQL type each table column gets, how a row value
 * is appended, and what a result column's DuckDB type and values become. DuckDB has unsigned
 * integers, millisecond-exact timestamps, intervals, blobs and lists, so every reference type
 * (reference-behavior.md §3.6) survives a query unchanged.
 */
import type * as Duck from '@duckdb/node-api';
import type { ResultColumn, Row, ValueType } from './result.js';
import type { ColumnDef, ColumnType } from './tables.js';

export type DuckModule = typeof Duck;

export const SQL_TYPE: Record<ColumnType, string> = {
  utf8: 'VARCHAR',
  u64: 'UBIGINT',
  u32: 'UINTEGER',
  bool: 'BOOLEAN',
  ts: 'TIMESTAMPTZ',
  dur: 'INTERVAL',
  bin: 'BLOB',
  list_u32: 'UINTEGER[]',
  list_utf8: 'VARCHAR[]',
};

const MS_PER_DAY = 86_400_000;

/** Appends rows (missing values are NULL); the appender is flushed and closed. */
export function appendRows(duck: DuckModule, appender: Duck.DuckDBAppender, columns: ColumnDef[], rows: Row[]): void {
  for (const row of rows) {
    for (const col of columns) {
      const v = row[col.name];
      if (v === null || v === undefined) {
        appender.appendNull();
        continue;
      }
      switch (col.type) {
        case 'utf8':
          appender.appendVarchar(String(v));
          break;
        case 'u64':
          appender.appendUBigInt(BigInt(v as bigint | number));
          break;
        case 'u32':
          appender.appendUInteger(Number(v));
          break;
        case 'bool':
          appender.appendBoolean(Boolean(v));
          break;
        case 'ts':
          appender.appendTimestampTZ(duck.timestampTZValue(BigInt(Math.trunc(Number(v))) * 1000n));
          break;
        case 'dur':
          appender.appendInterval(duck.intervalValue(0, 0, BigInt(Math.trunc(Number(v))) * 1000n));
          break;
        case 'bin':
          appender.appendBlob(v as Uint8Array);
          break;
        case 'list_u32':
          appender.appendList(duck.listValue(v as number[]), duck.LIST(duck.UINTEGER));
          break;
        case 'list_utf8':
          appender.appendList(duck.listValue(v as string[]), duck.LIST(duck.VARCHAR));
          break;
      }
    }
    appender.endRow();
  }
  appender.closeSync();
}

/** Our type for a DuckDB result type; undefined for types sent as text (structs, times, …). */
function valueType(duck: DuckModule, type: Duck.DuckDBType): ValueType | undefined {
  const T = duck.DuckDBTypeId;
  switch (type.typeId) {
    case T.VARCHAR:
    case T.UUID:
    case T.ENUM:
      return 'utf8';
    case T.UBIGINT:
      return 'u64';
    case T.UINTEGER:
    case T.USMALLINT:
    case T.UTINYINT:
      return 'u32';
    case T.BIGINT:
    case T.INTEGER:
    case T.SMALLINT:
    case T.TINYINT:
    case T.HUGEINT:
    case T.UHUGEINT:
    case T.SQLNULL:
      // DataFusion's integer literals and COUNT are Int64 (admin-query-arrow.txt).
      return 'i64';
    case T.DOUBLE:
    case T.FLOAT:
    case T.DECIMAL:
      return 'f64';
    case T.BOOLEAN:
      return 'bool';
    case T.TIMESTAMP_TZ:
    case T.TIMESTAMP:
    case T.TIMESTAMP_MS:
    case T.TIMESTAMP_S:
    case T.TIMESTAMP_NS:
    case T.DATE:
      return 'ts';
    case T.INTERVAL:
      return 'dur';
    case T.BLOB:
      return 'bin';
    case T.LIST: {
      const item = valueType(duck, (type as Duck.DuckDBListType).valueType);
      if (item === 'u32') return 'list_u32';
      if (item === 'utf8') return 'list_utf8';
      return undefined;
    }
    default:
      return undefined;
  }
}

function normalise(type: ValueType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'u64':
      return BigInt.asUintN(64, BigInt(v as bigint | number));
    case 'i64':
      return BigInt.asIntN(64, BigInt(v as bigint | number));
    case 'u32':
    case 'f64':
      return Number(v);
    case 'ts':
      return v instanceof Date ? v.getTime() : Number(v);
    case 'dur': {
      const iv = v as { months: number; days: number; micros: bigint };
      return (iv.months * 30 + iv.days) * MS_PER_DAY + Number(iv.micros / 1000n);
    }
    case 'bin':
      return v instanceof Uint8Array ? v : new Uint8Array(0);
    default:
      return v;
  }
}

/** JSON text for values of types without a column type of their own. */
const asText = (v: unknown): string | null =>
  v === null || v === undefined
    ? null
    : typeof v === 'string'
      ? v
      : JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));

/**
 * Columns in our form from DuckDB's names, types and JS values (one chunk of a result, or all
 * of it); every column is nullable until the plan says otherwise.
 */
export function readColumns(
  duck: DuckModule,
  names: string[],
  types: Duck.DuckDBType[],
  values: unknown[][],
): ResultColumn[] {
  return names.map((name, i) => {
    const type = valueType(duck, types[i]!);
    const raw = values[i] ?? [];
    if (type === undefined) return { name, type: 'utf8' as const, nullable: true, values: raw.map(asText) };
    return { name, type, nullable: true, values: raw.map((v) => normalise(type, v)) };
  });
}

/** One column list from the column lists of consecutive chunks. */
export function concatColumns(first: ResultColumn[], rest: ResultColumn[][]): ResultColumn[] {
  return first.map((col, i) => {
    const values = [...col.values];
    for (const chunk of rest) for (const v of chunk[i]!.values) values.push(v);
    return { ...col, values };
  });
}
