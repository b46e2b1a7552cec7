/**
 * SQL over the server's introspection tables (`POST /query`, the same tables the `restate`
 * CLI reads). Rows come back as JSON objects; NULL columns are absent from them, so the
 * column order comes from the `x-redstate-columns` header (src/admin/routes/query.ts).
 */
import { request, requestWithHeaders } from './http';

export type Row = Record<string, unknown>;

export async function query<T extends object = Row>(sql: string): Promise<T[]> {
  return (await request<{ rows: T[] }>('POST', '/query', { query: sql })).rows;
}

/** Rows and the result's column names in the SELECT's order. */
export async function queryTable(sql: string): Promise<{ rows: Row[]; columns: string[] }> {
  const { body, headers } = await requestWithHeaders<{ rows: Row[] }>('POST', '/query', { query: sql });
  const named = headers.get('x-redstate-columns');
  const columns = named
    ? named.split(',').map(decodeURIComponent)
    : [...new Set(body.rows.flatMap((r) => Object.keys(r)))];
  return { rows: body.rows, columns };
}

/** A SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** `(…)` of SQL string literals, for `IN`. */
export function sqlList(values: string[]): string {
  return `(${values.map(sqlString).join(', ')})`;
}
