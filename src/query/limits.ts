/**
 * What one `/query` request may cost, so that no query can take the server down (issue 9):
 * DuckDB's memory limit and threads, a time limit (the query is interrupted), at most a few
 * queries at once, and a bound on the result (rows and approximate bytes) checked while the
 * result streams out of DuckDB: past it the query stops and the client gets a 400 saying
 * which limit it hit, rather than a truncated answer that looks whole.
 */
import type { Config } from '../config.js';
import { QueryError } from './query-error.js';
import type { ResultColumn } from './result.js';

export interface QueryLimits {
  /** The whole request (waiting for a turn, loading the tables, running) is interrupted past this. */
  timeoutMs: number;
  /** DuckDB's `memory_limit`, shared by the queries that run at once. */
  memoryLimitMb: number;
  /** DuckDB's worker threads. */
  threads: number;
  maxRows: number;
  /** Approximate size of the answer: text and binary lengths, 8 bytes a number. */
  maxResultBytes: number;
  /** Queries that run at once; the others wait their turn (within their time limit). */
  concurrent: number;
}

export const DEFAULT_LIMITS: QueryLimits = {
  timeoutMs: 30_000,
  memoryLimitMb: 256,
  threads: 2,
  maxRows: 100_000,
  maxResultBytes: 32 * 1024 * 1024,
  concurrent: 2,
};

export function limitsFrom(config: Config): QueryLimits {
  return {
    ...DEFAULT_LIMITS,
    timeoutMs: config.queryTimeoutMs,
    memoryLimitMb: config.queryMemoryLimitMb,
    maxRows: config.queryMaxRows,
    maxResultBytes: config.queryMaxResultBytes,
  };
}

function valueBytes(v: unknown): number {
  if (v === null || v === undefined) return 1;
  if (typeof v === 'string') return v.length;
  if (v instanceof Uint8Array) return v.byteLength;
  if (Array.isArray(v)) return v.reduce((sum: number, x: unknown) => sum + valueBytes(x), 2);
  return 8;
}

/** Counts a result as it streams in; throws once it is past a limit. */
export class ResultBudget {
  private rows = 0;
  private bytes = 0;

  constructor(private readonly limits: QueryLimits) {}

  add(columns: ResultColumn[], rowCount: number): void {
    this.rows += rowCount;
    if (this.rows > this.limits.maxRows) {
      throw tooLarge(`more than ${this.limits.maxRows} rows (REDSTATE_QUERY_MAX_ROWS)`);
    }
    for (const col of columns) for (const v of col.values) this.bytes += valueBytes(v);
    if (this.bytes > this.limits.maxResultBytes) {
      throw tooLarge(`more than ${this.limits.maxResultBytes} bytes (REDSTATE_QUERY_MAX_RESULT_BYTES)`);
    }
  }
}

const tooLarge = (what: string): QueryError =>
  new QueryError(
    400,
    `Datafusion error: Resources exhausted: the query result has ${what}; add a LIMIT or select fewer rows or columns`,
  );

/** At most `size` holders at once; the others wait in arrival order, each up to its own deadline. */
export class Turns {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /** Resolves with a release function once it is this caller's turn; rejects after `waitMs`. */
  async take(waitMs: number): Promise<() => void> {
    if (this.active >= this.size) {
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(turn), 1);
          reject(new QueryError(503, 'Query service busy: other queries used the whole time limit; retry later'));
        }, waitMs);
        this.waiting.push(turn);
      });
    }
    this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.waiting.shift()?.();
    };
  }
}
