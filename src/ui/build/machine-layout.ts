/**
 * Lays a machine graph out with ELK's layered algorithm (build time): the diagram is computed
 * once when the UI is built, so the page ships coordinates instead of the ~480 kB (gzipped)
 * layout engine, and draws at once.
 */
import ELK, { type ElkExtendedEdge, type ElkNode, type ElkPoint } from 'elkjs/lib/elk.bundled.js';
import type { GraphEdge, GraphNode, LaidOutEdge, LaidOutNode, MachineLayout } from '../graph/layout-types.ts';
import type { MachineGraph } from './machine-graph.ts';
import { edgeWords } from '../graph/words.ts';

/** Text metrics of the diagram's font (system-ui, 13px / 12px), estimated: there is no DOM here. */
const CHAR_WIDTH = { node: 8, label: 7 };
const LINE_HEIGHT = 15;

function nodeSize(n: GraphNode): { width: number; height: number } {
  if (n.kind === 'initial') return { width: 14, height: 14 };
  if (n.kind === 'any') return { width: Math.round(n.label.length * CHAR_WIDTH.label) + 24, height: 28 };
  return { width: Math.max(96, Math.round(n.label.length * CHAR_WIDTH.node) + 36), height: 40 };
}

/** An edge's label in words (graph/words.ts); what machines/ calls it goes on the tooltip. */
function edgeLabelText(e: GraphEdge): string {
  return e.kind === 'initial' ? '' : edgeWords(e.source, e.event, e.guard);
}

function technicalName(e: GraphEdge): string {
  const guard = e.guard ? ` [${e.guard}]` : '';
  return e.kind === 'always' ? `always${guard}` : `${e.event}${guard}`;
}

function labelSize(text: string): { width: number; height: number } {
  const lines = text.split('\n');
  return {
    width: Math.round(Math.max(...lines.map((l) => l.length)) * CHAR_WIDTH.label) + 8,
    height: lines.length * LINE_HEIGHT + 2,
  };
}

/** Corners of the orthogonal routes are rounded with this radius, at most half a segment. */
const CORNER = 8;

/** An orthogonal route as SVG path data, its corners rounded. */
function pathOf(edge: ElkExtendedEdge): string {
  const section = edge.sections?.[0];
  if (!section) return '';
  const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
  const p = (pt: ElkPoint) => `${round(pt.x)} ${round(pt.y)}`;
  let d = `M ${p(points[0]!)}`;
  for (let i = 1; i < points.length - 1; i++) {
    const [a, b, c] = [points[i - 1]!, points[i]!, points[i + 1]!];
    const r = Math.min(CORNER, Math.hypot(b.x - a.x, b.y - a.y) / 2, Math.hypot(c.x - b.x, c.y - b.y) / 2);
    const towards = (from: ElkPoint, to: ElkPoint): ElkPoint => {
      const len = Math.hypot(to.x - from.x, to.y - from.y) || 1;
      return { x: from.x + ((to.x - from.x) / len) * r, y: from.y + ((to.y - from.y) / len) * r };
    };
    d += ` L ${p(towards(b, a))} Q ${p(b)} ${p(towards(b, c))}`;
  }
  return `${d} L ${p(points.at(-1)!)}`;
}

const round = (n: number) => Math.round(n * 10) / 10;

/**
 * `direction`: the way states flow. A machine of two states reads best side by side (RIGHT),
 * its self-loops above and below each state (NORTH_SOUTH), not stacked on one side.
 */
export async function layoutMachine(graph: MachineGraph, direction: 'DOWN' | 'RIGHT' = 'DOWN'): Promise<MachineLayout> {
  const elk = new ELK();
  const input: ElkNode = {
    id: graph.machine,
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': direction,
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.layered.spacing.nodeNodeBetweenLayers': '56',
      'elk.spacing.nodeNode': '48',
      'elk.spacing.edgeLabel': direction === 'RIGHT' ? '8' : '4',
      'elk.spacing.edgeEdge': direction === 'RIGHT' ? '24' : '14',
      'elk.layered.selfLoopDistribution': direction === 'RIGHT' ? 'NORTH_SOUTH' : 'EQUALLY',
      'elk.layered.spacing.edgeEdgeBetweenLayers': '14',
      'elk.spacing.edgeNode': '16',
      'elk.layered.spacing.edgeNodeBetweenLayers': '16',
      'elk.edgeLabels.placement': 'CENTER',
      'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
      // States flow down in the order the machine declares them, from the initial one.
      'elk.layered.cycleBreaking.strategy': 'MODEL_ORDER',
      'elk.padding': '[top=16,left=16,bottom=16,right=16]',
    },
    children: graph.nodes.map((n) => ({ id: n.id, ...nodeSize(n) })),
    edges: graph.edges.map((e) => {
      const text = edgeLabelText(e);
      return {
        id: e.id,
        sources: [e.source],
        targets: [e.target],
        labels: text ? [{ id: `${e.id}:label`, text, ...labelSize(text) }] : [],
      };
    }),
  };
  const laidOut = await elk.layout(input);

  const byId = new Map((laidOut.children ?? []).map((c: ElkNode) => [c.id, c]));
  const nodes: LaidOutNode[] = graph.nodes.map((n) => {
    const c = byId.get(n.id)!;
    return {
      id: n.id,
      label: n.label,
      kind: n.kind,
      x: round(c.x ?? 0),
      y: round(c.y ?? 0),
      width: c.width ?? 0,
      height: c.height ?? 0,
    };
  });
  const elkEdges = new Map((laidOut.edges ?? []).map((e) => [e.id, e]));
  const edges: LaidOutEdge[] = graph.edges.map((e) => {
    const out = elkEdges.get(e.id)!;
    const label = out.labels?.[0];
    return {
      ...e,
      technical: technicalName(e),
      path: pathOf(out),
      ...(label?.text
        ? {
            label: {
              text: label.text,
              x: round(label.x ?? 0),
              y: round(label.y ?? 0),
              width: label.width ?? 0,
              height: label.height ?? 0,
            },
          }
        : {}),
    };
  });
  return {
    machine: graph.machine,
    width: Math.ceil(laidOut.width ?? 0),
    height: Math.ceil(laidOut.height ?? 0),
    nodes,
    edges,
  };
}
