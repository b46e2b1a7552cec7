/**
 * `/query` is a read-only window on our tables (issue 9): DuckDB-only statements, table
 * functions and functions are refused as the reference refuses what it does not have, functions
 * whose result size is an argument are refused, results are bounded in rows and bytes, and
 * the queries the CLI and users write keep working.
 */
import { QueryError } from '../../src/query/query-error.js';
import { QueryEngine } from '../../src/query/engine.js';
import type { ExecutionContext } from 'ava';
import { queryServerTest, type QueryServer } from '../support/query-fixture.js';

const test = queryServerTest();

const unsupported = (sql: string) =>
  `Datafusion error: This feature is not implemented: Unsupported SQL statement: ${sql}`;
const invalidFunction = (name: string) => `Datafusion error: Error during planning: Invalid function '${name}'.`;
const noTableFunction = (name: string) => `Datafusion error: Error during planning: table function '${name}' not found`;

/** Each statement answers its status and `{"message"}`. */
async function expectRefused(
  t: ExecutionContext<QueryServer>,
  refused: Array<[string, number, string]>,
): Promise<void> {
  for (const [sql, status, message] of refused) {
    const res = await t.context.query(sql);
    t.is(res.status, status, sql);
    t.is(await res.text(), JSON.stringify({ message }), sql);
  }
}

test('statements other than queries are refused without running', async (t) => {
  const refused: Array<[string, number, string]> = [
    ['PRAGMA version', 500, unsupported('PRAGMA version')],
    ["ATTACH ':memory:' AS other", 500, unsupported("ATTACH ':memory:' AS other")],
    ["COPY sys_service TO '/tmp/x.csv'", 500, unsupported("COPY sys_service TO '/tmp/x.csv'")],
    ['INSTALL httpfs', 500, unsupported('INSTALL httpfs')],
    ['LOAD httpfs', 500, unsupported('LOAD httpfs')],
    ['CALL pragma_version()', 500, unsupported('CALL pragma_version()')],
    ['SET threads = 64', 500, unsupported('SET threads = 64')],
    ['EXPLAIN SELECT 1', 500, unsupported('EXPLAIN SELECT 1')],
    ['SUMMARIZE sys_service', 500, 'Datafusion error: This feature is not implemented: Unsupported FROM item: SUMMARY'],
  ];
  await expectRefused(t, refused);
});

test('DuckDB-only table functions and functions do not exist; size amplifiers are refused', async (t) => {
  const refused: Array<[string, number, string]> = [
    ['SELECT * FROM duckdb_settings()', 400, noTableFunction('duckdb_settings')],
    ["SELECT * FROM query('SELECT 1')", 400, noTableFunction('query')],
    ["SELECT * FROM query_table('sys_service')", 400, noTableFunction('query_table')],
    ["SELECT * FROM read_parquet('x')", 400, noTableFunction('read_parquet')],
    ["SELECT * FROM read_text('/etc/passwd')", 400, noTableFunction('read_text')],
    ["SELECT current_setting('memory_limit')", 500, invalidFunction('current_setting')],
    ["SELECT getvariable('x')", 500, invalidFunction('getvariable')],
    ['SELECT version()', 500, invalidFunction('version')],
    ["SELECT length(repeat('x', 1000000000))", 500, invalidFunction('repeat')],
    ["SELECT lpad('x', 1000000000, 'y')", 500, invalidFunction('lpad')],
    ['SELECT range(200000000)', 500, invalidFunction('range')],
    ['SELECT system.main.abs(1)', 500, invalidFunction('system.main.abs')],
    ['SELECT pg_catalog.abs(1)', 500, invalidFunction('pg_catalog.abs')],
    [
      'SELECT count(*) FROM sys_service WHERE name IN (SELECT * FROM duckdb_tables())',
      400,
      noTableFunction('duckdb_tables'),
    ],
  ];
  await expectRefused(t, refused);
});

test('ordinary SQL keeps working: range tables, operators, intervals, windows, CASE, CAST, SHOW, DESCRIBE', async (t) => {
  const one = async (sql: string) => {
    const res = await t.context.query(sql);
    t.is(res.status, 200, `${sql}: ${await res.clone().text()}`);
    return ((await res.json()) as { rows: unknown[] }).rows;
  };
  t.deepEqual(await one('SELECT count(*) AS n FROM range(10)'), [{ n: 10 }]);
  t.deepEqual(await one('SELECT sum(generate_series) AS s FROM generate_series(1, 4)'), [{ s: 10 }]);
  t.deepEqual(
    await one(
      "SELECT lower('AB') || upper('c') AS s, 7 % 4 AS m, 2 ** 3 AS p, 'abc' LIKE 'a%' AS l, 'abc' ILIKE 'A%' AS il",
    ),
    [{ s: 'abC', m: 3, p: 8, l: true, il: true }],
  );
  t.deepEqual(
    await one(
      "SELECT now() - INTERVAL 1 DAY < now() AS a, date_trunc('day', now()) <= now() AS b, extract(year FROM now()) > 2000 AS c",
    ),
    [{ a: true, b: true, c: true }],
  );
  t.deepEqual(await one('SELECT i, row_number() OVER (ORDER BY i DESC) AS r FROM range(3) t(i) ORDER BY i'), [
    { i: 0, r: 3 },
    { i: 1, r: 2 },
    { i: 2, r: 1 },
  ]);
  t.deepEqual(
    await one(
      "SELECT CASE WHEN 1 > 0 THEN 'y' END AS c, CAST('5' AS INT) + 1 AS n, coalesce(NULL, 2) AS k, string_agg(x, ',') AS s FROM (VALUES ('a'), ('b')) v(x)",
    ),
    [{ c: 'y', n: 6, k: 2, s: 'a,b' }],
  );
  t.true((await one('SHOW TABLES')).length >= 10);
  t.true((await one('DESCRIBE sys_service')).length >= 5);
});

test('results past the row or byte limit are a clear 400; under it, the answer is whole', async (t) => {
  const engine = new QueryEngine({ maxRows: 1000, maxResultBytes: 20_000 });
  try {
    const rows = await t.throwsAsync(
      engine.query('SELECT i FROM range(5000) t(i)', async () => []),
      { instanceOf: QueryError },
    );
    t.is(rows?.status, 400);
    t.is(
      rows?.message,
      'Datafusion error: Resources exhausted: the query result has more than 1000 rows (REDSTATE_QUERY_MAX_ROWS); add a LIMIT or select fewer rows or columns',
    );
    const bytes = await t.throwsAsync(
      engine.query("SELECT 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' FROM range(900)", async () => []),
      { instanceOf: QueryError },
    );
    t.is(bytes?.status, 400);
    t.regex(bytes!.message, /more than 20000 bytes \(REDSTATE_QUERY_MAX_RESULT_BYTES\)/);
    const whole = await engine.query('SELECT i FROM range(1000) t(i)', async () => []);
    t.is(whole.rowCount, 1000);
    t.deepEqual(whole.columns[0]!.values.slice(-2), [998n, 999n]);
  } finally {
    await engine.close();
  }
});

test('a query interrupted while its result streams is an error, never a partial answer', async (t) => {
  const engine = new QueryEngine({ timeoutMs: 300 });
  try {
    const sparse = 'SELECT i FROM range(1000000000) t(i) WHERE (i * 7) % 1000003 = 1';
    const err = await t.throwsAsync(
      engine.query(sparse, async () => []),
      { instanceOf: QueryError },
    );
    t.regex(err!.message, /time limit of 300 ms/);
  } finally {
    await engine.close();
  }
});

test('an engine idle past its close gives DuckDB up; the next queries, even overlapping a close, open it again', async (t) => {
  const engine = new QueryEngine({}, 30);
  try {
    const one = async () => Number((await engine.query('SELECT 41 + 1 AS n', async () => [])).columns[0]!.values[0]);
    t.is(await one(), 42);
    t.true(engine.isOpen);
    await new Promise((r) => setTimeout(r, 100));
    t.false(engine.isOpen, 'closed once idle');
    t.is(await one(), 42);
    const answers: unknown[] = [];
    for (let i = 0; i < 10; i++) {
      answers.push(...(await Promise.all([one(), one()])));
      await new Promise((r) => setTimeout(r, i * 7));
    }
    t.deepEqual(
      answers,
      Array.from({ length: 20 }, () => 42),
    );
  } finally {
    await engine.close();
  }
});
