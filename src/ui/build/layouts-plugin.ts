/**
 * A Vite plugin serving `virtual:machine-layouts`: the laid-out diagrams of the machines in
 * machines/, computed from their definitions when the UI is built.
 */
import type { Plugin } from 'vite';
import { invocationMachine } from '../../../machines/invocation.ts';
import { objectKeyMachine } from '../../../machines/object-key.ts';
import { machineGraph } from './machine-graph.ts';
import { layoutMachine } from './machine-layout.ts';

const ID = 'virtual:machine-layouts';
const RESOLVED = `\0${ID}`;

export function machineLayouts(): Plugin {
  return {
    name: 'machine-layouts',
    resolveId: (id) => (id === ID ? RESOLVED : undefined),
    async load(id) {
      if (id !== RESOLVED) return undefined;
      const [invocation, objectKey] = await Promise.all([
        layoutMachine(machineGraph(invocationMachine)),
        layoutMachine(machineGraph(objectKeyMachine), 'RIGHT'),
      ]);
      return `export const invocationLayout = ${JSON.stringify(invocation)};\nexport const objectKeyLayout = ${JSON.stringify(objectKey)};\n`;
    },
  };
}
