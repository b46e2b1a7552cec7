/**
 * DataFusion's names for unaliased output columns, so results look like the reference's:
 * `SELECT COUNT(1) …` is one column `count(Int64(1))` and `COUNT(*)` is `count(*)`
 * (reference-behavior.md §3.6, admin-query-arrow.txt); DuckDB would say `count(1)` and
 * `count_star()`. Also whether a column can be NULL, which Arrow schemas carry.
 *
 * Works on DuckDB's syntax tree of one select item; anything not covered keeps DuckDB's name.
 */
import type { TableDef } from './tables.js';

type Node = Record<string, unknown>;

/** A relation in a FROM clause: its qualifier (alias or table name) and, for our tables, its definition. */
export interface Relation {
  qualifier: string;
  table?: TableDef;
}

export type OutputHint = { star: true } | { star?: false; name?: string; nullable: boolean };

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
const children = (n: Node): unknown[] => (Array.isArray(n.children) ? n.children : []);

const COMPARISONS: Record<string, string> = {
  COMPARE_EQUAL: '=',
  COMPARE_NOTEQUAL: '!=',
  COMPARE_LESSTHAN: '<',
  COMPARE_GREATERTHAN: '>',
  COMPARE_LESSTHANOREQUALTO: '<=',
  COMPARE_GREATERTHANOREQUALTO: '>=',
};

const INTEGER_TYPES = new Set([
  'TINYINT',
  'SMALLINT',
  'INTEGER',
  'BIGINT',
  'HUGEINT',
  'UTINYINT',
  'USMALLINT',
  'UINTEGER',
  'UBIGINT',
]);

/** DataFusion's `ScalarValue` display of a literal. */
function literal(n: Node): string | undefined {
  const v = isNode(n.value) ? n.value : undefined;
  if (!v) return undefined;
  if (v.is_null) return 'NULL';
  const id = isNode(v.type) ? String(v.type.id) : '';
  if (INTEGER_TYPES.has(id)) return `Int64(${String(v.value)})`;
  if (id === 'DECIMAL' || id === 'DOUBLE' || id === 'FLOAT') return `Float64(${String(v.value)})`;
  if (id === 'VARCHAR') return `Utf8(${JSON.stringify(v.value)})`;
  if (id === 'BOOLEAN') return `Boolean(${String(v.value)})`;
  return undefined;
}

/** An expression as DataFusion prints it inside a name: column references are qualified. */
function expression(n: unknown, relations: Relation[]): string | undefined {
  if (!isNode(n)) return undefined;
  const sub = (c: unknown) => expression(c, relations);
  const all = (list: unknown[]) => {
    const parts = list.map(sub);
    return parts.every((p) => p !== undefined) ? (parts as string[]) : undefined;
  };
  switch (n.class) {
    case 'COLUMN_REF': {
      const names = Array.isArray(n.column_names) ? n.column_names.map(String) : [];
      if (names.length !== 1) return names.join('.');
      const only = relations.length === 1 ? relations[0] : undefined;
      return only?.qualifier ? `${only.qualifier}.${names[0]}` : names[0];
    }
    case 'CONSTANT':
      return literal(n);
    case 'FUNCTION': {
      const fn = String(n.function_name).toLowerCase();
      if (fn === 'count_star') return 'count(*)';
      const args = all(children(n));
      if (!args) return undefined;
      if (n.is_operator === true && args.length === 2) return `${args[0]} ${fn} ${args[1]}`;
      return `${fn}(${n.distinct === true ? 'DISTINCT ' : ''}${args.join(', ')})`;
    }
    case 'COMPARISON': {
      const op = COMPARISONS[String(n.type)];
      const [l, r] = [sub(n.left), sub(n.right)];
      return op && l !== undefined && r !== undefined ? `${l} ${op} ${r}` : undefined;
    }
    case 'OPERATOR': {
      const args = all(children(n));
      if (!args) return undefined;
      if (n.type === 'OPERATOR_IS_NULL' && args.length === 1) return `${args[0]} IS NULL`;
      if (n.type === 'OPERATOR_IS_NOT_NULL' && args.length === 1) return `${args[0]} IS NOT NULL`;
      if (n.type === 'OPERATOR_NOT' && args.length === 1) return `NOT ${args[0]}`;
      return undefined;
    }
    case 'CONJUNCTION': {
      const args = all(children(n));
      const op = n.type === 'CONJUNCTION_AND' ? ' AND ' : n.type === 'CONJUNCTION_OR' ? ' OR ' : undefined;
      return args && op ? args.join(op) : undefined;
    }
    default:
      return undefined;
  }
}

/** Whether an output column may be NULL: false for COUNT, literals, IS [NOT] NULL and NOT NULL columns. */
function nullable(n: Node, relations: Relation[]): boolean {
  switch (n.class) {
    case 'CONSTANT':
      return !isNode(n.value) || n.value.is_null === true;
    case 'FUNCTION': {
      const fn = String(n.function_name).toLowerCase();
      return fn !== 'count' && fn !== 'count_star';
    }
    case 'OPERATOR':
      return n.type !== 'OPERATOR_IS_NULL' && n.type !== 'OPERATOR_IS_NOT_NULL';
    case 'COLUMN_REF': {
      const names = Array.isArray(n.column_names) ? n.column_names.map((s) => String(s).toLowerCase()) : [];
      const column = names[names.length - 1];
      const rel =
        names.length === 2
          ? relations.find((r) => r.qualifier === names[0])
          : relations.length === 1
            ? relations[0]
            : undefined;
      const def = rel?.table?.columns.find((c) => c.name === column);
      return def?.nullable ?? true;
    }
    default:
      return true;
  }
}

/** One hint per select item: a `*` expands to columns we cannot count here. */
export function outputHints(selectList: unknown[], relations: Relation[]): OutputHint[] {
  return selectList.map((item): OutputHint => {
    if (!isNode(item) || item.class === 'STAR') return { star: true };
    const aliased = typeof item.alias === 'string' && item.alias !== '';
    // A bare column keeps its own name; an alias is taken as DuckDB reports it.
    const name = aliased || item.class === 'COLUMN_REF' ? undefined : expression(item, relations);
    return { ...(name !== undefined ? { name } : {}), nullable: nullable(item, relations) };
  });
}

/**
 * Applies the hints to the engine's columns; a single `*` is matched from both ends, and the
 * columns it expands to take their nullability from the FROM clause's tables.
 */
export function applyHints<T extends { name: string; nullable: boolean }>(
  columns: T[],
  hints: OutputHint[] | undefined,
  relations: Relation[],
): T[] {
  if (!hints) return columns;
  const stars = hints.filter((h) => h.star).length;
  if (stars > 1 || (stars === 0 && hints.length !== columns.length) || columns.length < hints.length - stars)
    return columns;
  const starAt = hints.findIndex((h) => h.star);
  const after = starAt < 0 ? 0 : hints.length - starAt - 1;
  return columns.map((col, i) => {
    let hint: OutputHint | undefined;
    if (starAt < 0 || i < starAt) hint = hints[i];
    else if (i >= columns.length - after) hint = hints[hints.length - (columns.length - i)];
    if (!hint || hint.star) {
      const defs = relations.flatMap((r) => r.table?.columns.filter((c) => c.name === col.name) ?? []);
      return defs.length === 1 ? { ...col, nullable: defs[0]!.nullable } : col;
    }
    return { ...col, ...(hint.name !== undefined ? { name: hint.name } : {}), nullable: hint.nullable };
  });
}
