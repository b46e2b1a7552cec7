/** What one fault campaign runs: one store, one kind of fault, some rounds of load. */
import type { StoreKind } from '../stack.js';

/**
 * - `server`: SIGKILL of redstate, started again at once on the same data, without waiting for
 *   the killed process to be reaped (a supervisor's restart).
 * - `redis`: SIGKILL of redis-server (AOF, `appendfsync always`), restarted at once on the
 *   same directory and port. Redis stores only; with Sentinel, of the current primary (the
 *   Sentinels promote the replica; the killed one is started again, once they have, as the new
 *   primary's replica: redis-sentinel.ts `rejoin`).
 * - `sdk`: SIGKILL of the SDK service, restarted 3 s later on the same port.
 */
export type FaultKind = 'server' | 'redis' | 'sdk';
export const faultKinds: FaultKind[] = ['server', 'redis', 'sdk'];

export interface CampaignOptions {
  store: StoreKind;
  fault: FaultKind;
  rounds: number;
  /** Operations per round. */
  ops: number;
  /** Operations in flight at once. */
  concurrency: number;
  faultsPerRound: number;
  /** Round r uses seed + r: a failed round can be run again alone with its own seed. */
  seed: number;
  /** How long the checks of a round wait for invocations to complete and keys to be free. */
  settleMs: number;
  /** How long a killed process stays down before its restart, drawn per fault; default per kind (`downtime`). */
  downtimeMs?: [min: number, max: number];
  /** A failed round's server log and executions file are copied below this folder. */
  artifactsDir?: string;
}

/** The long campaign of issue 9. */
export const longDefaults = { ops: 2000, concurrency: 48, faultsPerRound: 5, seed: 1, settleMs: 60_000 };

/** Rounds the long campaign runs per fault kind ("done when" of issue 9). */
export const longRounds: Record<FaultKind, number> = { server: 5, redis: 10, sdk: 5 };

/**
 * How long a killed process stays down by default, in ms. Redis: a restart within ~100 ms is
 * absorbed by ioredis's reconnection (the commands wait), a longer one fails commands whose
 * outcome is then unknown to the server; a range covers both.
 */
export const downtime: Record<FaultKind, [min: number, max: number]> = {
  server: [0, 0],
  redis: [0, 2_000],
  sdk: [3_000, 3_000],
};
