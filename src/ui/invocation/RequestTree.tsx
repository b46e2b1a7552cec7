/**
 * The request this invocation belongs to, as a tree: the invocation that started it at the
 * top, every call and send made under it below, each with its status, how long it took (or
 * has been going) and a link; this one marked. Live: reloads when any of them changes or a
 * new one joins.
 */
import type { LiveChange } from '../api/live';
import { loadRequestTree, TREE_LIMIT, type RequestTree as RequestTreeData, type TreeNode } from '../api/tree';
import { Elapsed } from '../components/Ago';
import { ErrorBox } from '../components/ErrorBox';
import { StatusBadge } from '../components/StatusBadge';
import { toMs } from '../format';
import { useLoad, type Loaded } from '../hooks/use-load';

function Node({ node, current }: { node: TreeNode; current: string }) {
  const r = node.row;
  return (
    <li data-id={r.id} class={r.id === current ? 'current' : ''}>
      <div class="tree-node">
        <StatusBadge row={r} />
        <div class="who">
          <strong>{r.target}</strong>
          <div class="mono small">
            {r.id === current ? `${r.id} (this one)` : <a href={`/ui/invocations/${r.id}`}>{r.id}</a>}
          </div>
        </div>
        <span class="small muted">
          <Elapsed since={toMs(r.created_at)} until={toMs(r.completed_at)} />
        </span>
      </div>
      {node.children.length > 0 && (
        <ul>
          {node.children.map((c) => (
            <Node key={c.row.id} node={c} current={current} />
          ))}
        </ul>
      )}
    </li>
  );
}

export function RequestTree({ id }: { id: string }) {
  const tree: Loaded<RequestTreeData | undefined> = useLoad(() => loadRequestTree(id), [id], {
    staleOn: (c: LiveChange): boolean =>
      c.deleted.length > 0 ||
      c.invocations.some(
        (i) => tree.data?.ids.has(i.id) === true || (i.parent !== undefined && tree.data?.ids.has(i.parent) === true),
      ),
  });
  const root = tree.data?.root;
  return (
    <div class="card" id="tree">
      <div class="row" style={{ justifyContent: 'space-between' }}>
        <h2 style={{ margin: 0 }}>Request tree</h2>
        <span class="muted small">
          {tree.data ? `${tree.data.ids.size} invocation${tree.data.ids.size === 1 ? '' : 's'}` : ''}
        </span>
      </div>
      <ErrorBox error={tree.error} />
      {root && (
        <ul class="tree">
          <Node node={root} current={id} />
        </ul>
      )}
      {root && root.row.invoked_by !== 'service' && (
        <div class="muted small" style={{ marginTop: '6px' }}>
          Started by{' '}
          {root.row.invoked_by === 'ingress' ? 'a request to the ingress' : root.row.invoked_by.replace(/_/g, ' ')}.
        </div>
      )}
      {tree.data?.truncated && <div class="muted small">Only the first {TREE_LIMIT} invocations are shown.</div>}
    </div>
  );
}
