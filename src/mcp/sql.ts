/** SQL through `/query`'s engine (its allow-list and limits), answered as row objects. */
import { resultRows } from '../query/json.js';
import { storeRowSource } from '../query/rows.js';
import type { McpDeps } from './deps.js';

export type Rows = Array<Record<string, unknown>>;

export async function sqlRows(deps: McpDeps, sql: string): Promise<Rows> {
  return resultRows(await deps.engine.query(sql, storeRowSource(deps.sources)));
}

/** A string literal: quotes doubled, as SQL escapes them. */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
