/**
 * A request's whole tree: from any invocation up to the one that started the request (its
 * `invoked_by_id` chain), then down to every call and send made under it, from sys_invocation.
 */
import type { InvocationRow } from './invocations';
import { query, sqlList, sqlString } from './query';

export interface TreeNode {
  row: InvocationRow;
  children: TreeNode[];
}

export interface RequestTree {
  root: TreeNode;
  /** Every id in the tree, to tell which live changes concern it. */
  ids: Set<string>;
  /** More invocations than are shown. */
  truncated: boolean;
}

/** A tree this large is cut: the page stays responsive, the invocations list has the rest. */
export const TREE_LIMIT = 300;
const MAX_DEPTH = 50;

const COLUMNS =
  'id, target, target_service_name, target_service_key, target_handler_name, target_service_ty, status, completion_result, completion_failure, created_at, completed_at, invoked_by, invoked_by_id';

async function rowsOf(ids: string[]): Promise<InvocationRow[]> {
  return ids.length === 0
    ? []
    : query<InvocationRow>(`SELECT ${COLUMNS} FROM sys_invocation WHERE id IN ${sqlList(ids)}`);
}

export async function loadRequestTree(id: string): Promise<RequestTree | undefined> {
  // Up: each step reads one invocation by id (the query engine reads just that one).
  let rootId = id;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const [row] = await query<{ invoked_by_id?: string }>(
      `SELECT invoked_by_id FROM sys_invocation WHERE id = ${sqlString(rootId)}`,
    );
    if (!row?.invoked_by_id) break;
    const parent = await query<{ id: string }>(
      `SELECT id FROM sys_invocation WHERE id = ${sqlString(row.invoked_by_id)}`,
    );
    if (parent.length === 0) break; // purged: the tree starts below it
    rootId = row.invoked_by_id;
  }
  // Down: who was invoked by whom, for every invocation with a parent, in one read.
  const edges = await query<{ id: string; invoked_by_id: string }>(
    'SELECT id, invoked_by_id FROM sys_invocation WHERE invoked_by_id IS NOT NULL',
  );
  const childrenOf = new Map<string, string[]>();
  for (const e of edges) childrenOf.set(e.invoked_by_id, [...(childrenOf.get(e.invoked_by_id) ?? []), e.id]);
  const ids = [rootId];
  let truncated = false;
  for (let i = 0; i < ids.length; i++) {
    for (const child of childrenOf.get(ids[i]!) ?? []) {
      if (ids.length >= TREE_LIMIT) truncated = true;
      else ids.push(child);
    }
  }
  const rows = new Map((await rowsOf(ids)).map((r) => [r.id, r]));
  const build = (nodeId: string): TreeNode | undefined => {
    const row = rows.get(nodeId);
    if (!row) return undefined;
    const children = (childrenOf.get(nodeId) ?? []).map(build).filter((n): n is TreeNode => n !== undefined);
    children.sort((a, b) => (a.row.created_at < b.row.created_at ? -1 : 1));
    return { row, children };
  };
  const root = build(rootId);
  return root ? { root, ids: new Set(rows.keys()), truncated } : undefined;
}
