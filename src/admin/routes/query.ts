/**
 * `POST /query` (reference-behavior.md §3.6): SQL over the sys_* tables. JSON
 * `{"rows":[…]}` when `accept` is exactly `application/json`, an Arrow IPC stream for any
 * other `accept` (the CLI sends `*\/*` and needs Arrow, §6.1). Errors are `QueryError`s,
 * which the admin funnel renders as `{"message"}`; body errors are axum's text ones.
 */
import type Router from '@koa/router';
import { AdminTextError } from '../errors.js';
import { arrowStream } from '../../query/arrow.js';
import { QueryEngine } from '../../query/engine.js';
import { limitsFrom } from '../../query/limits.js';
import { jsonStream } from '../../query/json.js';
import { storeRowSource, type QuerySources } from '../../query/rows.js';
import { readJsonBody } from '../http-io.js';
import { describeUnexpected, type JsonDocument } from '../../http/serde-json.js';

const DESERIALIZE = 'Failed to deserialize the JSON body into the target type: ';

/** The result's column names, in order, beside JSON rows. */
export const COLUMNS_HEADER = 'x-redstate-columns';

/** `QueryRequest { query: String }`, with serde's errors; unknown fields are ignored. */
export function decodeQueryRequest(doc: JsonDocument): string {
  const fail = (message: string, at: number) => {
    const p = doc.position(at);
    return new AdminTextError(422, `${DESERIALIZE}${message} at line ${p.line} column ${p.column}`);
  };
  const root = doc.root;
  if (root.kind !== 'object')
    throw fail(`invalid type: ${describeUnexpected(root)}, expected struct QueryRequest`, root.at);
  let query: string | undefined;
  for (const [key, value] of root.entries) {
    if (key !== 'query') continue;
    if (query !== undefined) throw fail('duplicate field `query`', value.at);
    if (value.kind !== 'string')
      throw fail(`query: invalid type: ${describeUnexpected(value)}, expected a string`, value.at);
    query = value.value;
  }
  if (query === undefined) throw fail('missing field `query`', root.end);
  return query;
}

/** What `/query` reads, and (tests) the engine to use. */
export type QueryRouteDeps = QuerySources & { engine?: QueryEngine };

/** The `/query` route; one engine serves every request. */
export function queryRoutes(deps: QueryRouteDeps): (router: Router) => void {
  const engine = deps.engine ?? new QueryEngine(limitsFrom(deps.config));
  return (router) => {
    router.post('/query', async (ctx) => {
      const sql = decodeQueryRequest(readJsonBody(ctx));
      const result = await engine.query(sql, storeRowSource(deps));
      ctx.status = 200;
      // Restate compares the header with `application/json` exactly (query.rs).
      // Streamed, chunked, as the reference sends it; the size was bounded while the result was read.
      if (ctx.get('accept') === 'application/json') {
        ctx.set('content-type', 'application/json');
        // JSON rows leave NULL columns out, so they cannot say the SELECT's column order; the
        // web UI's SQL console reads it here (a redstate extension: URI-encoded, comma-separated).
        ctx.set(COLUMNS_HEADER, result.columns.map((c) => encodeURIComponent(c.name)).join(','));
        ctx.body = jsonStream(result);
      } else {
        ctx.set('content-type', 'application/vnd.apache.arrow.stream');
        ctx.body = await arrowStream(result);
      }
    });
  };
}
