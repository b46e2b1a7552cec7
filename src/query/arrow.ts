/**
 * The Arrow IPC *stream* form of a query result, which Restate sends for any `accept` other
 * than `application/json` and which the CLI needs (reference-behavior.md §3.6, §6.1): a schema
 * message, record batches of 4,096 rows (none when there are no rows), the end-of-stream marker. Types are
 * the reference's: LargeUtf8, UInt64, Timestamp(ms, "+00:00"), Duration(ms), LargeBinary, …;
 * `COUNT` is a non-nullable Int64 (admin-query-arrow.txt).
 *
 * apache-arrow is imported on first use, like the engine.
 */
import type { Readable } from 'node:stream';
import type * as Arrow from 'apache-arrow';
import type { ResultColumn, ResultSet, ValueType } from './result.js';

type ArrowModule = typeof Arrow;

let arrowModule: Promise<ArrowModule> | undefined;

function arrowType(A: ArrowModule, type: ValueType): Arrow.DataType {
  switch (type) {
    case 'utf8':
      return new A.LargeUtf8();
    case 'u64':
      return new A.Uint64();
    case 'u32':
      return new A.Uint32();
    case 'i64':
      return new A.Int64();
    case 'f64':
      return new A.Float64();
    case 'bool':
      return new A.Bool();
    case 'ts':
      return new A.TimestampMillisecond('+00:00');
    case 'dur':
      return new A.DurationMillisecond();
    case 'bin':
      return new A.LargeBinary();
    case 'list_u32':
      return new A.List(new A.Field('item', new A.Uint32(), true));
    case 'list_utf8':
      return new A.List(new A.Field('item', new A.LargeUtf8(), true));
  }
}

/** apache-arrow wants Duration values as bigint; everything else is already in its form. */
function arrowValues(col: ResultColumn): unknown[] {
  if (col.type === 'dur') return col.values.map((v) => (v === null || v === undefined ? null : BigInt(v as number)));
  return col.values.map((v) => (v === undefined ? null : v));
}

/** Rows per record batch: the answer goes out batch by batch. */
const BATCH_ROWS = 4096;

async function arrowWriter(result: ResultSet): Promise<Arrow.RecordBatchStreamWriter> {
  arrowModule ??= import('apache-arrow');
  const A = await arrowModule;
  const types = result.columns.map((c) => arrowType(A, c.type));
  // A column said to be non-nullable that holds a NULL anyway is declared nullable.
  const fields = result.columns.map(
    (c, i) => new A.Field(c.name, types[i]!, c.nullable || c.values.some((v) => v === null)),
  );
  const schema = new A.Schema(fields);
  if (result.rowCount === 0) return A.RecordBatchStreamWriter.writeAll(new A.Table(schema));
  function* batches(): Generator<Arrow.RecordBatch> {
    for (let from = 0; from < result.rowCount; from += BATCH_ROWS) {
      const length = Math.min(BATCH_ROWS, result.rowCount - from);
      const children = result.columns.map(
        (c, i) => A.vectorFromArray(arrowValues(c).slice(from, from + length), types[i]!).data[0]!,
      );
      yield new A.RecordBatch(schema, A.makeData({ type: new A.Struct(fields), length, nullCount: 0, children }));
    }
  }
  return A.RecordBatchStreamWriter.writeAll(batches());
}

export async function encodeArrow(result: ResultSet): Promise<Uint8Array> {
  return (await arrowWriter(result)).toUint8Array(true);
}

/** The same bytes as `encodeArrow`, as a stream of record batches. */
export async function arrowStream(result: ResultSet): Promise<Readable> {
  return (await arrowWriter(result)).toNodeStream();
}
