/**
 * A machine's diagram as the build lays it out (build/machine-layout.ts) and the page draws
 * it (graph/MachineDiagram.tsx): positions in SVG user units, edges as SVG paths.
 */

/** `state` and `final` are the machine's states; `initial` and `any` are drawn helpers. */
export type NodeKind = 'state' | 'final' | 'initial' | 'any';

/**
 * `event`: a transition on an event; `always`: an eventless one (XState's `always`);
 * `initial`: from the start dot to the initial state; `any`: a transition of the machine's
 * root, which every state but a final one takes.
 */
export type EdgeKind = 'event' | 'always' | 'initial' | 'any';

/** A state of the machine, or a drawn helper. */
export interface GraphNode {
  id: string;
  label: string;
  kind: NodeKind;
}

export interface GraphEdge {
  id: string;
  kind: EdgeKind;
  source: string;
  target: string;
  /** The event type; empty for `always` and `initial`. */
  event: string;
  guard?: string;
}

export interface LaidOutNode extends GraphNode {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LaidOutEdge extends GraphEdge {
  /** SVG path data. */
  path: string;
  label?: { text: string; x: number; y: number; width: number; height: number };
  /** The transition as machines/ names it (`event [guard]`), for the label's tooltip. */
  technical: string;
}

export interface MachineLayout {
  machine: string;
  width: number;
  height: number;
  nodes: LaidOutNode[];
  edges: LaidOutEdge[];
}

/** Node ids of the drawn helpers; state ids are the state's key. */
export const INITIAL_NODE = '#initial';
export const ANY_NODE = '#any';
