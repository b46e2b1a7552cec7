/** The embedded store's named LMDB tables (embedded-store.ts says what each holds). */
import type { Database } from 'lmdb';

export type Table = Database<Buffer, Buffer>;

export const TABLES = [
  'invocations',
  'active',
  'state',
  'timers',
  'timerIndex',
  'outbox',
  'records',
  'meta',
  'originals',
  'coordination',
] as const;
export type TableName = (typeof TABLES)[number];
export type Tables = Record<TableName, Table>;
