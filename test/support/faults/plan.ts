/**
 * The operations of one round and the moments and lengths of its faults, drawn from the round's seed:
 * calls, sends and idempotent sends of `Work/step`, and read-modify-write adds on 20 keys of
 * `Counter` (test/support/services/faults.mjs), as calls and as sends.
 */
import type { Prng } from './prng.js';

export type OpKind = 'call' | 'send' | 'idempotentSend' | 'addCall' | 'addSend';

export interface OpBody {
  /** Names the operation in the service's records and in its result. */
  op: string;
  sleepMs: number;
  /** Adds only. */
  delta?: number;
}

export interface Op {
  index: number;
  kind: OpKind;
  /** The ingress path below `restate/`. */
  path: string;
  body: OpBody;
  idempotencyKey?: string;
  /** The object key of an add. */
  key?: string;
}

export const KEYS = Array.from({ length: 20 }, (_, i) => `k${i}`);

const mix: Array<[OpKind, number]> = [
  ['call', 20],
  ['send', 15],
  ['idempotentSend', 15],
  ['addCall', 25],
  ['addSend', 25],
];
const kindByWeight = mix.flatMap(([kind, weight]) => Array<OpKind>(weight).fill(kind));
const workSleeps = [0, 0, 10, 100, 500];
const addSleeps = [0, 5, 20, 50];

export function planLoad(rng: Prng, ops: number): Op[] {
  // About a third of the idempotent sends repeat a key used before in the round.
  const idempotencyKeys = Math.max(1, Math.round(ops * 0.1));
  const idempotentBodies = new Map<string, OpBody>();
  return Array.from({ length: ops }, (_, index): Op => {
    const kind = rng.pick(kindByWeight);
    switch (kind) {
      case 'call':
      case 'send':
        return { index, kind, path: `${kind}/Work/step`, body: { op: `op${index}`, sleepMs: rng.pick(workSleeps) } };
      case 'idempotentSend': {
        const key = `idem${rng.int(0, idempotencyKeys - 1)}`;
        // A repeat sends what the first send of the key sent.
        const body = idempotentBodies.get(key) ?? { op: key, sleepMs: rng.pick(workSleeps) };
        idempotentBodies.set(key, body);
        return { index, kind, path: 'send/Work/step', body, idempotencyKey: key };
      }
      case 'addCall':
      case 'addSend': {
        const key = rng.pick(KEYS);
        const body = { op: `op${index}`, sleepMs: rng.pick(addSleeps), delta: rng.int(1, 5) };
        return { index, kind, path: `${kind === 'addCall' ? 'call' : 'send'}/Counter/${key}/add`, body, key };
      }
    }
  });
}

export interface PlannedFault {
  /** The operation whose start triggers it: spread over the load, not at its very ends. */
  atOp: number;
  /** How long the killed process stays down. */
  downtimeMs: number;
}

export function planFaults(
  rng: Prng,
  ops: number,
  faults: number,
  [minDown, maxDown]: [number, number],
): PlannedFault[] {
  const first = Math.floor(ops * 0.05);
  const last = Math.max(first, Math.floor(ops * 0.85));
  return Array.from({ length: faults }, () => ({
    atOp: rng.int(first, last),
    downtimeMs: rng.int(minDown, maxDown),
  })).sort((a, b) => a.atOp - b.atOp);
}
