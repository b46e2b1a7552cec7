/**
 * DuckDB's errors, rewritten as the DataFusion errors Restate 1.7.12 answers with
 * (reference-behavior.md §3.6): always `{"message":"Datafusion error: …"}`, with
 *   - a parse error → 400 `SQL error: ParserError("Expected: an SQL statement, found: SELEC at Line: 1, Column: 1")`;
 *   - an unknown table → 500 `Error during planning: table 'restate.public.nope' not found`;
 *   - an unknown column → 500 `Schema error: No field named nope. Valid fields are t.a, t.b.`;
 *   - DML → 400 `Error during planning: DML not supported: Delete`.
 * Restate answers 400 for plain planning errors and 500 for those DataFusion attaches a
 * diagnostic to (unknown table or column), and 500 for execution errors.
 */
import { QueryError } from './query-error.js';
import type { QueryLimits } from './limits.js';
import type { Relation } from './naming.js';

const PREFIX = 'Datafusion error: ';

export const planningError = (message: string, status = 400): QueryError =>
  new QueryError(status, `${PREFIX}Error during planning: ${message}`);

export const tableNotFound = (name: string): QueryError => planningError(`table '${name}' not found`, 500);

export const executionError = (message: string): QueryError =>
  new QueryError(500, `${PREFIX}Execution error: ${message}`);

export const notImplemented = (message: string): QueryError =>
  new QueryError(500, `${PREFIX}This feature is not implemented: ${message}`);

/** The query was interrupted at its deadline (limits.ts). */
export function timeLimitError(limits?: Pick<QueryLimits, 'timeoutMs'>): QueryError {
  const limit = limits ? ` of ${limits.timeoutMs} ms (REDSTATE_QUERY_TIMEOUT_MS)` : '';
  return new QueryError(500, `${PREFIX}Resources exhausted: the query ran past its time limit${limit}`);
}

/** Line and column (1-based) of a character offset, as sqlparser reports positions. */
function lineColumn(sql: string, offset: number): { line: number; column: number } {
  const before = sql.slice(0, Math.max(0, offset));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines[lines.length - 1]?.length ?? 0) + 1 };
}

/**
 * A syntax error from DuckDB's parser (`syntax error at or near "X"` at a character offset).
 * When the statement's first word is the culprit, sqlparser's wording is exact; otherwise the
 * text says what DuckDB found.
 */
export function parseError(sql: string, message: string, position: number | undefined): QueryError {
  const near = /at or near "((?:[^"]|"")*)"/.exec(message)?.[1];
  const found = near ?? (/end of input/.test(message) ? 'EOF' : undefined);
  const firstWord = sql.search(/\S/);
  let text: string;
  if (found !== undefined && position !== undefined) {
    const at = found === 'EOF' ? '' : ((p) => ` at Line: ${p.line}, Column: ${p.column}`)(lineColumn(sql, position));
    const atStatementStart = position === firstWord || firstWord < 0;
    text = atStatementStart ? `Expected: an SQL statement, found: ${found}${at}` : `${message}${at}`;
  } else {
    text = message;
  }
  return new QueryError(400, `${PREFIX}SQL error: ParserError(${JSON.stringify(text)})`);
}

/** `No field named x. Valid fields are q.a, q.b.`: the fields of the top-level FROM clause. */
export function noField(name: string, relations: Relation[]): QueryError {
  const fields = relations.flatMap((r) => (r.table ? r.table.columns.map((c) => `${r.qualifier}.${c.name}`) : []));
  const valid = fields.length > 0 ? ` Valid fields are ${fields.join(', ')}.` : '';
  return new QueryError(500, `${PREFIX}Schema error: No field named ${name}.${valid}`);
}

/**
 * Any error DuckDB raised while binding or running a statement. `columnRefs` resolves
 * DuckDB's `Referenced table "t" not found` to the column the query wrote (`t.c`).
 */
export function fromDuckDb(
  err: unknown,
  relations: Relation[],
  columnRef: (qualifier: string) => string | undefined,
  limits?: Pick<QueryLimits, 'timeoutMs'>,
): QueryError {
  if (err instanceof QueryError) return err;
  const full = err instanceof Error ? err.message : String(err);
  const first = full.split('\n')[0] ?? full;
  let m: RegExpExecArray | null;
  if ((m = /^Catalog Error: Table with name (\S+) does not exist/.exec(first)))
    return tableNotFound(`restate.public.${m[1]!.toLowerCase()}`);
  if ((m = /^Binder Error: Referenced column "((?:[^"]|"")+)" not found/.exec(first)))
    return noField(m[1]!.toLowerCase(), relations);
  if ((m = /^Binder Error: Table "((?:[^"]|"")+)" does not have a column named "((?:[^"]|"")+)"/.exec(first))) {
    return noField(`${m[1]!.toLowerCase()}.${m[2]!.toLowerCase()}`, relations);
  }
  if ((m = /^Binder Error: Referenced table "((?:[^"]|"")+)" not found/.exec(first))) {
    const qualifier = m[1]!.toLowerCase();
    return noField(columnRef(qualifier) ?? qualifier, relations);
  }
  if ((m = /^(?:Binder|Catalog|Permission|Not implemented) Error: (.*)$/.exec(first))) return planningError(m[1]!);
  if ((m = /^Parser Error: (.*)$/.exec(first)))
    return new QueryError(400, `${PREFIX}SQL error: ParserError(${JSON.stringify(m[1])})`);
  if (/^INTERRUPT Error/.test(first)) return timeLimitError(limits);
  if ((m = /^Out of Memory Error: (.*)$/.exec(first)))
    return new QueryError(500, `${PREFIX}Resources exhausted: ${m[1]}`);
  return executionError(first.replace(/^[A-Za-z ]+ Error: /, ''));
}
