/**
 * Where an invocation's history (sys_invocation_transitions) lies on its machine's diagram:
 * which edges each entry took, how often, and which states it visited.
 */
import { ANY_NODE, INITIAL_NODE, type LaidOutEdge, type MachineLayout } from './layout-types';

export interface PathEntry {
  from: string | null;
  event: string;
  to: string;
}

/** The edges one entry went along: the initial entry also passes the eventless hop of the initial state. */
export function edgesOf(layout: MachineLayout, entry: PathEntry): LaidOutEdge[] {
  const edges = layout.edges;
  if (entry.from === null) {
    const initial = edges.find((e) => e.kind === 'initial');
    if (!initial) return [];
    if (initial.target === entry.to) return [initial];
    const hop = edges.find((e) => e.kind === 'always' && e.source === initial.target && e.target === entry.to);
    return hop ? [initial, hop] : [initial];
  }
  const direct = edges.find(
    (e) => e.kind === 'event' && e.source === entry.from && e.target === entry.to && e.event === entry.event,
  );
  if (direct) return [direct];
  const fromAny = edges.find(
    (e) => e.kind === 'any' && e.source === ANY_NODE && e.event === entry.event && e.target === entry.to,
  );
  return fromAny ? [fromAny] : [];
}

export interface PathOverlay {
  /** Times each edge was taken. */
  taken: Map<string, number>;
  /** The edges of the last entry. */
  last: Set<string>;
  visited: Set<string>;
}

export function overlayOf(layout: MachineLayout, entries: PathEntry[]): PathOverlay {
  const taken = new Map<string, number>();
  const visited = new Set<string>();
  let last = new Set<string>();
  for (const entry of entries) {
    const edges = edgesOf(layout, entry);
    for (const e of edges) {
      taken.set(e.id, (taken.get(e.id) ?? 0) + 1);
      if (e.source !== INITIAL_NODE && e.source !== ANY_NODE) visited.add(e.source);
      visited.add(e.target);
    }
    last = new Set(edges.map((e) => e.id));
  }
  return { taken, last, visited };
}
