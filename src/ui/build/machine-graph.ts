/**
 * The graph of a machine definition (build time): its states and every transition between
 * them, read from the definition itself. `@xstate/graph`'s `toDirectedGraph` gives states and
 * event transitions; it leaves out eventless (`always`) ones, added here from each state node,
 * and the root's own transitions (taken from any state) become edges from one `any` helper.
 */
import { toDirectedGraph } from '@xstate/graph';
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { ANY_NODE, INITIAL_NODE, type EdgeKind, type GraphEdge, type GraphNode } from '../graph/layout-types.ts';
import { stateWord } from '../graph/words.ts';

export interface MachineGraph {
  machine: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

interface TransitionLike {
  eventType: string;
  target?: readonly AnyStateNode[] | undefined;
  guard?: unknown;
}

/** A guard's name as the definition gives it; inline guards have none worth showing. */
function guardName(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && guard !== null && typeof (guard as { type?: unknown }).type === 'string')
    return (guard as { type: string }).type;
  return 'condition';
}

export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const root = toDirectedGraph(machine);
  const states = root.children;
  if (states.some((s) => s.children.length > 0)) {
    // Both machines are flat today; nested states need compound nodes in the layout.
    throw new Error(`${machine.id}: nested states are not drawn yet (src/ui/build/machine-graph.ts)`);
  }
  const nodes: GraphNode[] = [{ id: INITIAL_NODE, label: '', kind: 'initial' }];
  const edges: GraphEdge[] = [];
  const add = (kind: EdgeKind, source: string, t: TransitionLike, fallbackTarget: string) => {
    const targets = t.target && t.target.length > 0 ? t.target.map((n) => n.key) : [fallbackTarget];
    for (const target of targets) {
      const guard = guardName(t.guard);
      edges.push({
        id: `e${edges.length}`,
        kind,
        source,
        target,
        event: kind === 'always' ? '' : t.eventType,
        ...(guard ? { guard } : {}),
      });
    }
  };

  for (const state of states) {
    const node = state.stateNode;
    nodes.push({ id: node.key, label: stateWord(node.key), kind: node.type === 'final' ? 'final' : 'state' });
    // A targetless transition stays in its state: a loop.
    for (const e of state.edges) add('event', node.key, e.transition as TransitionLike, node.key);
    for (const t of node.always ?? []) add('always', node.key, t as TransitionLike, node.key);
  }
  const initial = machine.root.initial?.target[0]?.key;
  if (initial)
    edges.push({ id: `e${edges.length}`, kind: 'initial', source: INITIAL_NODE, target: initial, event: '' });
  if (root.edges.length > 0) {
    nodes.push({ id: ANY_NODE, label: 'any state but a final one', kind: 'any' });
    for (const e of root.edges) add('any', ANY_NODE, e.transition as TransitionLike, machine.root.key);
  }
  return { machine: machine.id, nodes, edges };
}
