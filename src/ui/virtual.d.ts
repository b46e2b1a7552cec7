/** Served by build/layouts-plugin.ts. */
declare module 'virtual:machine-layouts' {
  import type { MachineLayout } from './graph/layout-types';
  export const invocationLayout: MachineLayout;
  export const objectKeyLayout: MachineLayout;
}
