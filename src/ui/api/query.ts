/**
 * SQL over the server's introspection tables (`POST /query`, the same tables the `restate`
 * CLI reads). Rows come back as JSON objects; NULL columns are absent from them.
 */
import { request } from './http';

export type Row = Record<string, unknown>;

export async function query<T extends object = Row>(sql: string): Promise<T[]> {
  return (await request<{ rows: T[] }>('POST', '/query', { query: sql })).rows;
}

/** A SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
