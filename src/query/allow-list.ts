/**
 * What `/query` lets through to DuckDB: a read-only window on our tables, with the functions
 * the reference (DataFusion) has too. It is checked on DuckDB's own syntax tree of the
 * statement (`json_serialize_sql`), before the statement runs:
 *
 *   - table functions: `range` and `generate_series` (DataFusion has both); any other
 *     (`read_csv`, `query`, `query_table`, `duckdb_settings`, …) is "table function not found";
 *   - functions and window functions: the names both engines know, less those whose result
 *     size is an argument (`repeat`, `lpad`, `rpad`, list `range`, `array_resize`, …): DuckDB
 *     builds such values outside its memory limit, so one call could take the process down.
 *     `version` is DuckDB's own. Anything else is "Invalid function", as DataFusion says it;
 *   - qualified function names (`system.main.abs`, `pg_catalog.…`) are refused;
 *   - FROM items: our tables and CTEs (plan.ts checks the names), subqueries, joins, VALUES,
 *     SHOW TABLES and DESCRIBE; not SUMMARIZE or PIVOT.
 *
 * Statements that are not queries never get here: they do not serialize (engine.ts).
 */
import { QueryError } from './query-error.js';
import { notImplemented, planningError } from './engine-errors.js';

type Node = Record<string, unknown>;

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
const lower = (v: unknown): string => (typeof v === 'string' ? v.toLowerCase() : '');

const TABLE_FUNCTIONS = new Set(['range', 'generate_series']);

/** Functions and aggregates of both DataFusion 54 and DuckDB, less the size amplifiers and `version`. */
const SHARED_FUNCTIONS = `abs acos acosh array_agg array_append array_cat array_concat array_contains array_distance
  array_distinct array_extract array_has array_has_all array_has_any array_indexof array_intersect array_length
  array_pop_back array_pop_front array_position array_prepend array_push_back array_push_front array_reverse
  array_slice array_sort array_to_string ascii asin asinh atan atan2 atanh avg bit_and bit_length bit_or bit_xor
  bool_and bool_or cardinality cbrt ceil char_length character_length chr concat concat_ws contains corr cos cosh
  cot count covar_pop covar_samp cume_dist current_date date_part date_trunc datepart datetrunc decode degrees
  dense_rank element_at encode ends_with exp factorial first_value flatten floor gcd greatest instr isnan
  json_contains json_keys lag last_value lcm lead least left length levenshtein list_any_value list_append
  list_cat list_concat list_contains list_distance list_distinct list_element list_extract list_has list_has_all
  list_has_any list_indexof list_intersect list_max list_position list_prepend list_reverse list_slice list_sort
  list_zip ln log log10 log2 lower ltrim make_date make_time map map_entries map_extract map_keys map_values max
  md5 mean median min now nth_value ntile nullif octet_length percent_rank pi position pow power quantile_cont
  radians random rank regexp_replace regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx
  regr_sxy regr_syy replace reverse right round row row_number rtrim sha256 sin sinh split_part sqrt starts_with
  stddev stddev_pop stddev_samp string_agg string_to_array strpos substr substring sum tan tanh to_hex
  to_timestamp today translate trim trunc union_extract union_tag upper uuid var_pop var_samp`;

/**
 * What DuckDB's parser writes as function calls for plain SQL: operators (`+`, `||`, LIKE as
 * `~~`, SIMILAR TO), `count(*)`, list and struct literals, LIKE … ESCAPE, AT TIME ZONE, and the
 * interval literals (`INTERVAL 1 DAY` is `to_days(1)`).
 */
const SYNTAX_FUNCTIONS = `+ - * / // % ** ^ || ~~ !~~ ~~* !~~* & | << >> ~ count_star list_value struct_pack
  like_escape regexp_full_match timezone unnest to_years to_months to_weeks to_days to_hours to_minutes
  to_seconds to_milliseconds to_microseconds`;

const FUNCTIONS = new Set(`${SHARED_FUNCTIONS} ${SYNTAX_FUNCTIONS}`.split(/\s+/).filter(Boolean));

const FROM_ITEMS = new Set([
  'BASE_TABLE',
  'SUBQUERY',
  'JOIN',
  'TABLE_FUNCTION',
  'EMPTY',
  'EXPRESSION_LIST',
  'SHOW_REF',
]);
const SHOW_TYPES = new Set(['SHOW_UNQUALIFIED', 'DESCRIBE']);

/** DataFusion's answer to a function it does not have (a 500, as the reference answers it). */
const invalidFunction = (name: string): QueryError => planningError(`Invalid function '${name}'.`, 500);

function checkFunction(n: Node): void {
  const name = lower(n.function_name);
  const schema = lower(n.schema);
  const catalog = lower(n.catalog);
  // The parser writes `main` on the functions it generates; a user-written schema is refused.
  if (catalog !== '' || (schema !== '' && schema !== 'main')) {
    throw invalidFunction([catalog, schema, name].filter(Boolean).join('.'));
  }
  if (!FUNCTIONS.has(name)) throw invalidFunction(name);
}

function checkFromItem(n: Node): void {
  const type = String(n.type);
  if (!FROM_ITEMS.has(type) || (type === 'SHOW_REF' && !SHOW_TYPES.has(String(n.show_type)))) {
    throw notImplemented(`Unsupported FROM item: ${type === 'SHOW_REF' ? String(n.show_type) : type}`);
  }
  if (type === 'TABLE_FUNCTION') {
    const fn = isNode(n.function) ? n.function : {};
    const name = lower(fn.function_name);
    if (!TABLE_FUNCTIONS.has(name) || lower(fn.catalog) !== '' || !['', 'main'].includes(lower(fn.schema))) {
      throw planningError(`table function '${name}' not found`);
    }
  }
}

/** Throws the reference's error for the first thing in the tree /query does not allow. */
export function checkAllowed(ast: unknown): void {
  const visit = (v: unknown, tableFunction: boolean): void => {
    if (Array.isArray(v)) {
      for (const item of v) visit(item, false);
      return;
    }
    if (!isNode(v)) return;
    if (v.class === 'FUNCTION' && !tableFunction) checkFunction(v);
    if (v.class === 'WINDOW' && !FUNCTIONS.has(lower(v.function_name))) throw invalidFunction(lower(v.function_name));
    if (typeof v.type === 'string' && 'query_location' in v && 'sample' in v) checkFromItem(v);
    for (const [key, child] of Object.entries(v)) {
      if (typeof child === 'object' && child !== null) visit(child, v.type === 'TABLE_FUNCTION' && key === 'function');
    }
  };
  visit(ast, false);
}
