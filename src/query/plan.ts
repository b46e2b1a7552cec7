/**
 * What a query needs, read from the syntax tree DuckDB's own parser produced
 * (`json_serialize_sql`): which of our tables it references (only those are materialised,
 * §3.6), which rows of them can matter (`id = '…'` / `id IN (…)` pins, so that
 * `restate invocations describe` reads one journal, not all of them, §4), which columns it
 * uses, and what DataFusion would call its output columns.
 *
 * Nothing here parses SQL text: it only walks DuckDB's tree.
 */
import { INFORMATION_SCHEMA_TABLES, PUBLIC_TABLES, type TableDef } from './tables.js';
import { outputHints, type OutputHint, type Relation } from './naming.js';

type Node = Record<string, unknown>;

/** The schema the information_schema views are served from (DuckDB reserves the real name). */
export const INFO_SCHEMA = 'restate_information_schema';

/** Values a WHERE clause pins columns of one table reference to; AND within one map. */
export type Pins = Map<string, Set<string>>;

export interface TableScan {
  table: TableDef;
  /** One entry per reference (OR); undefined when some reference reads the whole table. */
  pins: Pins[] | undefined;
}

export interface QueryPlan {
  /** Public tables to materialise, by name. */
  scans: Map<string, TableScan>;
  /** The first referenced table we do not serve, as DataFusion names it (`restate.public.x`). */
  unknownTable?: string;
  /** True when the tree was changed (information_schema redirected): run the tree's SQL. */
  rewritten: boolean;
  ast: Node;
  /** Whether a column of this name may be read (a `*` anywhere reads all of them). */
  usesColumn(name: string): boolean;
  /** One hint per top-level select item, or undefined when the top level is not a plain SELECT. */
  output: OutputHint[] | undefined;
  /** The relations of the top-level FROM, for "Valid fields are …" in column errors. */
  relations: Relation[];
}

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
const lower = (v: unknown): string => (typeof v === 'string' ? v.toLowerCase() : '');

/** Calls `visit` on every object node of the tree, parents first. */
function walk(node: unknown, visit: (n: Node) => void): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, visit);
  } else if (isNode(node)) {
    visit(node);
    for (const value of Object.values(node)) if (typeof value === 'object' && value !== null) walk(value, visit);
  }
}

const QUERY_NODES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE', 'RECURSIVE_CTE_NODE', 'CTE_NODE']);

/**
 * Whether a `*` can bring every column of a table into the result. A `*` in a FROM subquery
 * only exposes what its parent names (`SELECT COUNT(1) FROM (SELECT * FROM sys_invocation)
 * WHERE status != 'completed'`, the CLI's count, needs `status` only), unless the parent
 * passes all of it on: its own `*`, DISTINCT, a set operation, or a NATURAL/USING join, which
 * compare whole rows. Anything less clear-cut counts as reaching the result.
 */
function starReachesResult(ast: Node): boolean {
  let reaches = false;
  const hasStar = (v: unknown): boolean => {
    if (Array.isArray(v)) return v.some(hasStar);
    if (!isNode(v) || QUERY_NODES.has(String(v.type))) return false;
    return v.class === 'STAR' || Object.values(v).some((x) => typeof x === 'object' && x !== null && hasStar(x));
  };
  const scan = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(scan);
    else if (isNode(v)) {
      if (QUERY_NODES.has(String(v.type))) query(v, true);
      else for (const x of Object.values(v)) if (typeof x === 'object' && x !== null) scan(x);
    }
  };
  const from = (f: unknown, live: boolean): void => {
    if (!isNode(f)) return;
    if (f.type === 'JOIN') {
      const whole = live || f.ref_type === 'NATURAL' || (Array.isArray(f.using_columns) && f.using_columns.length > 0);
      from(f.left, whole);
      from(f.right, whole);
      scan(f.condition);
    } else if (f.type === 'SUBQUERY' && isNode(f.subquery) && isNode(f.subquery.node)) {
      query(f.subquery.node, live);
    } else {
      scan(f);
    }
  };
  const query = (n: Node, live: boolean): void => {
    if (n.type !== 'SELECT_NODE') {
      // Set operations compare whole rows; other query nodes are not analysed.
      for (const v of Object.values(n)) if (typeof v === 'object' && v !== null) scan(v);
      return;
    }
    const distinct = Array.isArray(n.modifiers) && n.modifiers.some((m) => isNode(m) && m.type === 'DISTINCT_MODIFIER');
    const own = hasStar(n.select_list);
    if (own && (live || distinct)) reaches = true;
    for (const [k, v] of Object.entries(n)) if (k !== 'from_table' && typeof v === 'object' && v !== null) scan(v);
    from(n.from_table, (live || distinct) && own);
  };
  scan(ast);
  return reaches;
}

type TableKind = { kind: 'public' | 'info'; def: TableDef } | { kind: 'cte' } | { kind: 'unknown'; name: string };

function classify(ref: Node, ctes: Set<string>): TableKind {
  const catalog = lower(ref.catalog_name);
  const schema = lower(ref.schema_name);
  const name = lower(ref.table_name);
  if (catalog === '' || catalog === 'restate') {
    if (schema === '' && ctes.has(name)) return { kind: 'cte' };
    const pub = PUBLIC_TABLES.get(name);
    if ((schema === '' || schema === 'public') && pub) return { kind: 'public', def: pub };
    const info = INFORMATION_SCHEMA_TABLES.get(name);
    if (schema === 'information_schema' && info) return { kind: 'info', def: info };
  }
  const display = [catalog || 'restate', schema || 'public', name].join('.');
  return { kind: 'unknown', name: display };
}

/** The relations a FROM clause brings into scope, with the base-table nodes they came from. */
function relationsOf(
  from: unknown,
  ctes: Set<string>,
  out: Array<Relation & { node?: Node }> = [],
): Array<Relation & { node?: Node }> {
  if (!isNode(from)) return out;
  if (from.type === 'JOIN') {
    relationsOf(from.left, ctes, out);
    relationsOf(from.right, ctes, out);
  } else if (from.type === 'BASE_TABLE') {
    const kind = classify(from, ctes);
    const table = kind.kind === 'public' || kind.kind === 'info' ? kind.def : undefined;
    out.push({ qualifier: lower(from.alias) || lower(from.table_name), ...(table ? { table } : {}), node: from });
  } else if (from.type !== 'EMPTY') {
    out.push({ qualifier: lower(from.alias) });
  }
  return out;
}

function conjuncts(expr: unknown): Node[] {
  if (!isNode(expr)) return [];
  if (expr.type === 'CONJUNCTION_AND' && Array.isArray(expr.children)) return expr.children.flatMap(conjuncts);
  return [expr];
}

/** A non-null VARCHAR constant's value. */
function stringConstant(n: unknown): string | undefined {
  if (!isNode(n) || n.class !== 'CONSTANT' || !isNode(n.value)) return undefined;
  const v = n.value;
  return !v.is_null && isNode(v.type) && v.type.id === 'VARCHAR' && typeof v.value === 'string' ? v.value : undefined;
}

/** `col = 'v'`, `'v' = col` or `col IN ('a', 'b')`: the column reference and its values. */
function pinOf(c: Node): { ref: string[]; values: string[] } | undefined {
  const refOf = (n: unknown) =>
    isNode(n) && n.class === 'COLUMN_REF' && Array.isArray(n.column_names) ? n.column_names.map(lower) : undefined;
  if (c.type === 'COMPARE_EQUAL') {
    for (const [a, b] of [
      [c.left, c.right],
      [c.right, c.left],
    ]) {
      const ref = refOf(a);
      const value = stringConstant(b);
      if (ref && value !== undefined) return { ref, values: [value] };
    }
  }
  if (c.type === 'COMPARE_IN' && Array.isArray(c.children)) {
    const [first, ...rest] = c.children;
    const ref = refOf(first);
    const values = rest.map(stringConstant);
    if (ref && rest.length > 0 && values.every((v) => v !== undefined)) return { ref, values: values as string[] };
  }
  return undefined;
}

/**
 * Pins of the base tables in one SELECT's FROM, from its WHERE conjuncts. Restricting a table
 * to the rows such a conjunct accepts cannot change the result: the WHERE still runs, and an
 * `=`/`IN` rejects the NULL-extended rows an outer join would make of the missing ones.
 */
function pinSelect(select: Node, ctes: Set<string>, pinsOf: Map<Node, Pins>): void {
  const relations = relationsOf(select.from_table, ctes);
  for (const c of conjuncts(select.where_clause)) {
    const pin = pinOf(c);
    if (!pin) continue;
    const column = pin.ref[pin.ref.length - 1]!;
    let target: (typeof relations)[number] | undefined;
    if (pin.ref.length === 2) target = relations.find((r) => r.qualifier === pin.ref[0]);
    else if (pin.ref.length === 1 && relations.length === 1) target = relations[0];
    if (!target?.node || !target.table?.columns.some((col) => col.name === column)) continue;
    const pins = pinsOf.get(target.node) ?? new Map<string, Set<string>>();
    const previous = pins.get(column);
    // Two conjuncts on the same column: both must hold, so keep the intersection.
    pins.set(column, previous ? new Set(pin.values.filter((v) => previous.has(v))) : new Set(pin.values));
    pinsOf.set(target.node, pins);
  }
}

/**
 * A FROM subquery without an alias keeps the qualifier of the one table inside it in
 * DataFusion: the CLI's count `SELECT COUNT(1) FROM (SELECT * FROM sys_invocation inv LIMIT
 * 50000) WHERE inv.target_service_name IN (…)` (reference §4, `invocations list --service`)
 * reads `inv.…` outside. DuckDB names such a subquery `unnamed_subquery`, so it gets that
 * qualifier as its alias. True when a subquery was named.
 */
function nameDerivedTables(ast: Node, ctes: Set<string>): boolean {
  let named = false;
  walk(ast, (n) => {
    // Table references have no `class`; subquery expressions (`IN (SELECT …)`) do.
    if (n.type !== 'SUBQUERY' || n.class !== undefined || lower(n.alias) !== '') return;
    const inner = isNode(n.subquery) && isNode(n.subquery.node) ? n.subquery.node : undefined;
    if (inner?.type !== 'SELECT_NODE') return;
    const relations = relationsOf(inner.from_table, ctes);
    if (relations.length !== 1 || relations[0]!.qualifier === '') return;
    n.alias = relations[0]!.qualifier;
    named = true;
  });
  return named;
}

/**
 * DataFusion's `first_value` and `last_value` are aggregates too, with an ORDER BY of their own
 * (`FIRST_VALUE(id ORDER BY created_at ASC) … GROUP BY`, `restate services status`); DuckDB has
 * them as window functions only, and their aggregate forms as `first` and `last`. True when a
 * call was renamed. Window calls (`OVER (…)`) are WINDOW nodes and stay as they are.
 */
function aggregateFirstLast(ast: Node): boolean {
  let renamed = false;
  walk(ast, (n) => {
    if (n.class !== 'FUNCTION') return;
    const name = lower(n.function_name);
    if (name !== 'first_value' && name !== 'last_value') return;
    n.function_name = name === 'first_value' ? 'first' : 'last';
    renamed = true;
  });
  return renamed;
}

export function planQuery(ast: Node): QueryPlan {
  const ctes = new Set<string>();
  walk(ast, (n) => {
    if (isNode(n.cte_map) && Array.isArray(n.cte_map.map))
      for (const e of n.cte_map.map) if (isNode(e)) ctes.add(lower(e.key));
  });

  const pinsOf = new Map<Node, Pins>();
  walk(ast, (n) => {
    if (n.type === 'SELECT_NODE') pinSelect(n, ctes, pinsOf);
  });

  const scans = new Map<string, TableScan>();
  const columnsUsed = new Set<string>();
  let unknownTable: string | undefined;
  let rewritten = nameDerivedTables(ast, ctes);
  if (aggregateFirstLast(ast)) rewritten = true;
  let star = starReachesResult(ast);
  walk(ast, (n) => {
    if (n.class === 'COLUMN_REF' && Array.isArray(n.column_names))
      columnsUsed.add(lower(n.column_names[n.column_names.length - 1]));
    if (n.type !== 'BASE_TABLE') return;
    const kind = classify(n, ctes);
    if (kind.kind === 'unknown') unknownTable ??= kind.name;
    if (kind.kind === 'info') {
      n.schema_name = INFO_SCHEMA;
      n.catalog_name = '';
      rewritten = true;
    }
    if (kind.kind !== 'public') return;
    const pins = pinsOf.get(n);
    const scan = scans.get(kind.def.name) ?? { table: kind.def, pins: [] };
    scan.pins = pins && scan.pins ? [...scan.pins, pins] : undefined;
    scans.set(kind.def.name, scan);
  });

  // A name that is no column of a referenced table may be a whole-row reference (`SELECT inv
  // FROM sys_invocation inv`): then every column may be read.
  const known = new Set([...scans.values()].flatMap((s) => s.table.columns.map((c) => c.name)));
  if ([...columnsUsed].some((c) => !known.has(c))) star = true;

  const top = Array.isArray(ast.statements) && isNode(ast.statements[0]) ? ast.statements[0].node : undefined;
  const topSelect = isNode(top) && top.type === 'SELECT_NODE' ? top : undefined;
  const relations = topSelect
    ? relationsOf(topSelect.from_table, ctes).map(({ qualifier, table }) => ({
        qualifier,
        ...(table ? { table } : {}),
      }))
    : [];
  return {
    scans,
    ...(unknownTable !== undefined ? { unknownTable } : {}),
    rewritten,
    ast,
    usesColumn: (name) => star || columnsUsed.has(name),
    output:
      topSelect && Array.isArray(topSelect.select_list) ? outputHints(topSelect.select_list, relations) : undefined,
    relations,
  };
}

/** The values every reference of a scan pins `column` to, or undefined when one does not. */
export function pinnedValues(scan: TableScan | undefined, column: string): Set<string> | undefined {
  if (!scan?.pins) return undefined;
  const out = new Set<string>();
  for (const pins of scan.pins) {
    const values = pins.get(column);
    if (!values) return undefined;
    for (const v of values) out.add(v);
  }
  return out;
}
