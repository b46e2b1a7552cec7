/**
 * The side channel of test/support/services/faults.mjs: one line per execution of a ctx.run
 * closure, in the order the closures ran, kept across SIGKILLs of the service.
 */
import { readFile } from 'node:fs/promises';

export type StepName = 'step' | 'enter' | 'exit';
export const stepNames: StepName[] = ['step', 'enter', 'exit'];

export interface Execution {
  name: StepName;
  /** The invocation the closure ran for. */
  inv: string;
  /** This execution's id: what the closure returned, so the result that was journaled names it. */
  exec: string;
  /** The operation (the `op` of the handler's input). */
  op: string;
  /** The object key, for Counter/add. */
  key?: string;
  at: number;
  /** Position in the file: executions are ordered by it. */
  line: number;
}

export async function readExecutions(file: string): Promise<Execution[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    // No closure ran yet.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l, line) => ({ ...(JSON.parse(l) as Omit<Execution, 'line'>), line }));
}
