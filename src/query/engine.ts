/**
 * Runs the SQL of `POST /query` (reference-behavior.md §3.6) in an embedded DuckDB.
 *
 * Why DuckDB (@duckdb/node-api), measured on this machine's kind with the CLI's statements
 * (§4, cli-admin-requests.txt) over 1,000 invocation rows:
 *   - DuckDB: all 20 statements run; import ≈120–340 ms once, instance ≈16–43 ms once, then
 *     ≈9–14 ms per query including loading the rows (≈55 ms with 10,000 rows); ≈100–125 MB
 *     RSS; 70 MB installed (native binary from the npm registry, no install script).
 *     Unsigned ints, ms timestamps, intervals, blobs and lists keep every reference type.
 *   - PGlite (27 MB): all 20 run, but ≈5.9 s to start, ≈32 ms per query, ≈800 MB RSS, and
 *     no unsigned 64-bit type (partition keys exceed int8).
 *   - alasql: 9 of the 20 fail to parse (`target` is a keyword to it, among others), and its
 *     optional dependency react-native-fs pulls in react-native.
 * The module is imported on the first query, so a server that never serves one never pays.
 *
 * One in-memory instance per engine; each query gets its own connection and transaction:
 * the referenced tables are filled (only those, §3.6), the statement runs, and the
 * transaction is rolled back, so concurrent queries never see each other's rows.
 */
import type * as Duck from '@duckdb/node-api';
import { QueryError } from './query-error.js';
import { StoreUnavailable } from '../store/types.js';
import { checkAllowed } from './allow-list.js';
import { appendRows, concatColumns, readColumns, SQL_TYPE, type DuckModule } from './duckdb-values.js';
import {
  fromDuckDb,
  notImplemented,
  parseError,
  planningError,
  tableNotFound,
  timeLimitError,
} from './engine-errors.js';
import { applyHints } from './naming.js';
import { INFO_SCHEMA, planQuery, type QueryPlan, type TableScan } from './plan.js';
import { DEFAULT_LIMITS, ResultBudget, Turns, type QueryLimits } from './limits.js';
import type { ResultColumn, ResultSet, Row } from './result.js';
import { CATALOG, INFORMATION_SCHEMA_TABLES, informationSchemaRows, PUBLIC_TABLES, type TableDef } from './tables.js';

/** Produces the rows of one referenced table; the plan tells which rows and columns matter. */
export type RowSource = (scan: TableScan, plan: QueryPlan) => Promise<Row[]>;

interface Opened {
  duck: DuckModule;
  instance: Duck.DuckDBInstance;
}

type Parsed = { kind: 'select'; ast: Record<string, unknown>; count: number } | { kind: 'other' };

/**
 * DuckDB marks a node without a source position with `"query_location":` u64::MAX, which a
 * JavaScript number cannot hold: it travels through JSON.parse/stringify as a string mark.
 */
const NO_LOCATION = '"query_location":18446744073709551615';
const NO_LOCATION_MARK = '"query_location":"u64::MAX"';

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

function createTable(schema: string, table: TableDef): string {
  const cols = table.columns.map((c) => `${quote(c.name)} ${SQL_TYPE[c.type]}${c.nullable ? '' : ' NOT NULL'}`);
  return `CREATE TABLE ${CATALOG}.${schema}.${quote(table.name)} (${cols.join(', ')})`;
}

/**
 * DuckDB keeps the memory of the tables its queries filled while its instance lives, rolled
 * back or not: after five queries over 20,000 invocations the server's anonymous RSS stayed
 * 57–67 MiB above what it was before (`malloc_trim` gives none of it back). An instance
 * closed once queries stop for this long gives it back (8–12 MiB above); the next query opens
 * one again, in 40–70 ms.
 */
const IDLE_CLOSE_MS = 30_000;

export class QueryEngine {
  private opened: Promise<Opened> | undefined;
  private readonly limits: QueryLimits;
  private readonly turns: Turns;
  private inFlight = 0;
  private idle: NodeJS.Timeout | undefined;

  /** `idleCloseMs`: how long after the last query the DuckDB instance is closed. */
  constructor(
    limits: Partial<QueryLimits> = {},
    private readonly idleCloseMs = IDLE_CLOSE_MS,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.turns = new Turns(this.limits.concurrent);
  }

  /** Whether a DuckDB instance is open (or opening). */
  get isOpen(): boolean {
    return this.opened !== undefined;
  }

  /**
   * Runs one statement within the limits (limits.ts); rejects with `QueryError` for anything
   * the client did wrong or asked too much of, `StoreUnavailable` when the rows cannot be read.
   */
  async query(sql: string, source: RowSource): Promise<ResultSet> {
    const deadline = Date.now() + this.limits.timeoutMs;
    clearTimeout(this.idle);
    this.inFlight++;
    try {
      const release = await this.turns.take(this.limits.timeoutMs);
      try {
        return await this.run(sql, source, deadline);
      } finally {
        release();
      }
    } finally {
      if (--this.inFlight === 0) this.idle = setTimeout(() => void this.close(), this.idleCloseMs).unref();
    }
  }

  private async run(sql: string, source: RowSource, deadline: number): Promise<ResultSet> {
    const { duck, instance } = await this.open().catch((err: unknown) => {
      // E.g. no DuckDB binary for this platform: Restate's answer when its engine is off.
      this.opened = undefined;
      throw new QueryError(503, `Query service not available: ${err instanceof Error ? err.message : String(err)}`);
    });
    const conn = await instance.connect();
    const interrupter = interruptAt(conn, deadline);
    let plan: QueryPlan | undefined;
    let inTransaction = false;
    try {
      await conn.run(`USE ${CATALOG}.public`);
      const parsed = await this.parse(conn, sql);
      if (parsed.kind === 'other') throw await refusal(duck, conn, sql);
      if (parsed.count > 1) throw notImplemented('The context currently only supports a single SQL statement');
      checkAllowed(parsed.ast);
      plan = planQuery(parsed.ast);
      if (plan.unknownTable !== undefined) throw tableNotFound(plan.unknownTable);
      const statement = plan.rewritten ? await this.sqlOf(conn, plan.ast) : sql;
      await conn.run('BEGIN TRANSACTION');
      inTransaction = true;
      for (const scan of plan.scans.values()) await this.fill(duck, conn, scan, plan, source);
      const extracted = await conn.extractStatements(statement);
      if (extracted.count !== 1) throw notImplemented('The context currently only supports a single SQL statement');
      const prepared = await extracted.prepare(0);
      if (prepared.statementType !== duck.StatementType.SELECT) throw await refusal(duck, conn, sql);
      const result = await this.collect(duck, await prepared.stream());
      // An interrupted streaming result can end like a finished one: never answer it as whole.
      if (interrupter.fired) throw timeLimitError(this.limits);
      return { columns: applyHints(result.columns, plan.output, plan.relations), rowCount: result.rowCount };
    } catch (err) {
      if (err instanceof StoreUnavailable) throw err;
      throw fromDuckDb(err, plan?.relations ?? [], (q) => (plan ? columnOfQualifier(plan, q) : undefined), this.limits);
    } finally {
      interrupter.stop();
      if (inTransaction) await conn.run('ROLLBACK').catch(() => undefined);
      conn.closeSync();
    }
  }

  /** Reads the result chunk by chunk, stopping as soon as it is past the result limits. */
  private async collect(duck: DuckModule, result: Duck.DuckDBResult): Promise<ResultSet> {
    const names = result.columnNames();
    const types = result.columnTypes();
    const budget = new ResultBudget(this.limits);
    const chunks: ResultColumn[][] = [];
    let rowCount = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const columns = readColumns(duck, names, types, chunk.convertColumns(duck.JSDuckDBValueConverter));
      budget.add(columns, chunk.rowCount);
      chunks.push(columns);
      rowCount += chunk.rowCount;
    }
    const [first, ...rest] = chunks;
    return { columns: first ? concatColumns(first, rest) : readColumns(duck, names, types, []), rowCount };
  }

  /** Starts DuckDB now rather than on the first query (e.g. in tests that time queries). */
  async warmUp(): Promise<void> {
    await this.open();
  }

  async close(): Promise<void> {
    clearTimeout(this.idle);
    const opened = this.opened;
    this.opened = undefined;
    if (opened) (await opened.catch(() => undefined))?.instance.closeSync();
  }

  private open(): Promise<Opened> {
    this.opened ??= openDuckDb(this.limits);
    return this.opened;
  }

  /** DuckDB's syntax tree of the text, or `other` for statements it only serialises if SELECT. */
  private async parse(conn: Duck.DuckDBConnection, sql: string): Promise<Parsed> {
    const reader = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
    const tree = JSON.parse(String(reader.getColumnsJS()[0]?.[0]).replaceAll(NO_LOCATION, NO_LOCATION_MARK)) as Record<
      string,
      unknown
    >;
    if (tree.error !== true) {
      const count = Array.isArray(tree.statements) ? tree.statements.length : 0;
      if (count === 0) throw parseError(sql, 'syntax error at end of input', sql.length);
      return { kind: 'select', ast: tree, count };
    }
    if (tree.error_type === 'parser') {
      const position = Number(tree.position);
      throw parseError(sql, String(tree.error_message), Number.isFinite(position) ? position : undefined);
    }
    return { kind: 'other' };
  }

  private async sqlOf(conn: Duck.DuckDBConnection, ast: Record<string, unknown>): Promise<string> {
    const text = JSON.stringify(ast).replaceAll(NO_LOCATION_MARK, NO_LOCATION);
    const reader = await conn.runAndReadAll('SELECT json_deserialize_sql($1::JSON)', [text]);
    return String(reader.getColumnsJS()[0]?.[0]);
  }

  private async fill(
    duck: DuckModule,
    conn: Duck.DuckDBConnection,
    scan: TableScan,
    plan: QueryPlan,
    source: RowSource,
  ): Promise<void> {
    let rows: Row[];
    try {
      rows = await source(scan, plan);
    } catch (err) {
      if (err instanceof StoreUnavailable) throw err;
      // The store failed, not the query: DataFusion reports its table providers' errors so.
      throw new QueryError(
        500,
        `Datafusion error: External error: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (rows.length === 0) return;
    appendRows(duck, await conn.createAppender(scan.table.name, 'public', CATALOG), scan.table.columns, rows);
  }
}

async function openDuckDb(limits: QueryLimits): Promise<Opened> {
  const duck = await import('@duckdb/node-api');
  // No files (not even spilling to a temp directory), no network, no extension downloads:
  // queries only ever see our tables, within the memory limit.
  const instance = await duck.DuckDBInstance.create(':memory:', {
    enable_external_access: 'false',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    max_temp_directory_size: '0B',
    memory_limit: `${limits.memoryLimitMb}MB`,
    threads: String(limits.threads),
  });
  const setup = await instance.connect();
  try {
    const ddl = [
      `ATTACH ':memory:' AS ${CATALOG}`,
      `CREATE SCHEMA ${CATALOG}.public`,
      `CREATE SCHEMA ${CATALOG}.${INFO_SCHEMA}`,
    ];
    for (const t of PUBLIC_TABLES.values()) ddl.push(createTable('public', t));
    for (const t of INFORMATION_SCHEMA_TABLES.values()) ddl.push(createTable(INFO_SCHEMA, t));
    await setup.run(ddl.join(';\n'));
    const rows = informationSchemaRows();
    for (const t of INFORMATION_SCHEMA_TABLES.values()) {
      appendRows(duck, await setup.createAppender(t.name, INFO_SCHEMA, CATALOG), t.columns, rows[t.name] ?? []);
    }
    // Queries cannot change settings (memory limit, external access) from here on.
    await setup.run('SET lock_configuration = true');
  } finally {
    setup.closeSync();
  }
  return { duck, instance };
}

/**
 * The reference's error for a statement that is not a query (§3.6): DML and DDL are planning
 * errors; anything else (PRAGMA, SET, ATTACH, COPY, LOAD, CALL, EXPLAIN…) is not implemented.
 * Preparing a statement tells its type without running it.
 */
async function refusal(duck: DuckModule, conn: Duck.DuckDBConnection, sql: string): Promise<QueryError> {
  let type: Duck.StatementType | undefined;
  try {
    type = (await (await conn.extractStatements(sql)).prepare(0)).statementType;
  } catch {
    // Not even preparable here (COPY, ATTACH need files): still not a query.
  }
  const S = duck.StatementType;
  const dml: Partial<Record<number, string>> = {
    [S.INSERT]: 'Insert Into',
    [S.UPDATE]: 'Update',
    [S.DELETE]: 'Delete',
    [S.MERGE_INTO]: 'Merge',
  };
  const op = type === undefined ? undefined : dml[type];
  if (op) return planningError(`DML not supported: ${op}`);
  const ddl: Partial<Record<number, string>> = {
    [S.CREATE]: 'Create',
    [S.DROP]: 'Drop',
    [S.ALTER]: 'Alter',
    [S.CREATE_FUNC]: 'CreateFunction',
  };
  const kind = type === undefined ? undefined : ddl[type];
  if (kind) return planningError(`DDL not supported: ${kind}`);
  return notImplemented(`Unsupported SQL statement: ${sql.trim()}`);
}

/**
 * Interrupts whatever the connection runs from `deadline` on. An interrupt only stops the
 * statement running at that moment, so it is repeated until the query gives up.
 */
function interruptAt(conn: Duck.DuckDBConnection, deadline: number): { stop(): void; readonly fired: boolean } {
  let repeat: NodeJS.Timeout | undefined;
  let fired = false;
  const first = setTimeout(
    () => {
      fired = true;
      conn.interrupt();
      repeat = setInterval(() => conn.interrupt(), 100);
    },
    Math.max(0, deadline - Date.now()),
  );
  return {
    stop() {
      clearTimeout(first);
      clearInterval(repeat);
    },
    get fired() {
      return fired;
    },
  };
}

/** `q.c` for the first column reference qualified by `q` in the query. */
function columnOfQualifier(plan: QueryPlan, qualifier: string): string | undefined {
  let found: string | undefined;
  const visit = (node: unknown): void => {
    if (found !== undefined || typeof node !== 'object' || node === null) return;
    const n = node as Record<string, unknown>;
    const names = n.class === 'COLUMN_REF' && Array.isArray(n.column_names) ? n.column_names.map(String) : undefined;
    if (names && names.length === 2 && names[0]!.toLowerCase() === qualifier)
      found = `${qualifier}.${names[1]!.toLowerCase()}`;
    for (const v of Object.values(n)) visit(v);
  };
  visit(plan.ast);
  return found;
}
