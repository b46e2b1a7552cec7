/**
 * A machine drawn from its build-time layout (virtual:machine-layouts), with the current
 * state filled and, when a path is given, the edges it took drawn over the diagram (the last
 * one moving) with how often each was taken.
 */
import type { LaidOutEdge, LaidOutNode, MachineLayout } from './layout-types';
import { overlayOf, type PathEntry } from './path';

/** How the current state is filled: after what it means (an ended invocation's outcome, a free key). */
export type Tone = 'accent' | 'ok' | 'bad' | 'warn' | 'info' | 'violet' | 'neutral';

interface DiagramProps {
  layout: MachineLayout;
  current?: string | undefined;
  tone?: Tone;
  path?: PathEntry[];
  title?: string;
  /** Largest scale the diagram is drawn at (its layout's units are px at 1). */
  maxScale?: number;
}

function Node({ node, current, visited }: { node: LaidOutNode; current: boolean; visited: boolean }) {
  if (node.kind === 'initial') {
    return (
      <g class="node initial">
        <circle cx={node.x + node.width / 2} cy={node.y + node.height / 2} r={node.width / 2} />
      </g>
    );
  }
  const cls = ['node', node.kind, current ? 'current' : '', visited ? 'visited' : ''].join(' ');
  return (
    <g class={cls} data-state={node.id}>
      <title>{node.id}</title>
      <rect x={node.x} y={node.y} width={node.width} height={node.height} rx={node.kind === 'any' ? 14 : 10} />
      <text x={node.x + node.width / 2} y={node.y + node.height / 2} text-anchor="middle" dominant-baseline="central">
        {node.label}
      </text>
    </g>
  );
}

function Edge({ edge, count, last }: { edge: LaidOutEdge; count: number; last: boolean }) {
  const cls = ['edge', edge.kind, count > 0 ? 'taken' : '', last ? 'last' : ''].join(' ');
  const lines = edge.label?.text.split('\n') ?? [];
  return (
    <g class={cls} data-edge={`${edge.source}|${edge.event}|${edge.target}`}>
      <title>{edge.technical}</title>
      <path d={edge.path} marker-end={count > 0 ? 'url(#arrow-taken)' : 'url(#arrow)'} />
      {edge.label && (
        <>
          <rect
            class="label-bg"
            x={edge.label.x}
            y={edge.label.y}
            width={edge.label.width}
            height={edge.label.height}
            rx={3}
          />
          <text x={edge.label.x + edge.label.width / 2} y={edge.label.y + 12} text-anchor="middle">
            {lines.map((line, i) => (
              <tspan key={i} x={edge.label!.x + edge.label!.width / 2} dy={i === 0 ? 0 : 15}>
                {line}
              </tspan>
            ))}
          </text>
          {count > 1 && (
            <text class="count" x={edge.label.x + edge.label.width + 3} y={edge.label.y + 11}>
              ×{count}
            </text>
          )}
        </>
      )}
    </g>
  );
}

export function MachineDiagram({ layout, current, tone = 'accent', path = [], title, maxScale = 1.25 }: DiagramProps) {
  const overlay = overlayOf(layout, path);
  return (
    <svg
      class={`diagram tone-${tone}`}
      viewBox={`0 0 ${layout.width} ${layout.height}`}
      style={{ maxWidth: `${layout.width * maxScale}px` }}
      role="img"
      aria-label={title ?? `${layout.machine} machine`}
      data-current={current ?? ''}
    >
      <defs>
        {['arrow', 'arrow-taken'].map((id) => (
          <marker
            key={id}
            id={id}
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto-start-reverse"
          >
            <path d="M 0 0 L 10 5 L 0 10 z" fill={id === 'arrow' ? 'var(--muted)' : 'var(--accent)'} />
          </marker>
        ))}
      </defs>
      {layout.edges.map((e) => (
        <Edge key={e.id} edge={e} count={overlay.taken.get(e.id) ?? 0} last={overlay.last.has(e.id)} />
      ))}
      {layout.nodes.map((n) => (
        <Node key={n.id} node={n} current={n.id === current} visited={overlay.visited.has(n.id)} />
      ))}
    </svg>
  );
}
