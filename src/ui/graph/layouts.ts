/** The machines' diagrams, laid out when the UI was built (build/layouts-plugin.ts). */
import { invocationLayout as invocation, objectKeyLayout as objectKey } from 'virtual:machine-layouts';
import type { MachineLayout } from './layout-types';

export const invocationLayout: MachineLayout = invocation;
export const objectKeyLayout: MachineLayout = objectKey;
