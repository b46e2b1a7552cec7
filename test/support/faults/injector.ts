/**
 * Injects a round's faults when the load reaches their planned operations, one fault at a time:
 * SIGKILL of redstate (started again at once, without waiting for the killed one to be reaped,
 * as a supervisor does), of redis-server (on a Redis Cluster: one master, picked by the
 * operation that triggers the fault; with Sentinel: the current primary, and the next fault only
 * once the Sentinels have a primary with a replica again) or of the SDK service, each followed
 * by its restart on the same data, directory and port.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Stack } from '../stack.js';
import type { FaultKind } from './options.js';
import type { Op, PlannedFault } from './plan.js';

export interface Fault {
  kind: FaultKind;
  /** The operation whose start triggered it. */
  atOp: number;
  downtimeMs: number;
  killedAt: number;
  restartedAt: number;
}

export interface FaultInjector {
  onStart(op: Op): void;
  /** Waits for the faults in progress; their record, or the error of one that could not be injected. */
  done(): Promise<Fault[]>;
}

export function faultInjector(stack: Stack, kind: FaultKind, planned: PlannedFault[]): FaultInjector {
  const pending = [...planned];
  const faults: Fault[] = [];
  let failure: unknown;
  let chain = Promise.resolve();
  const inject = async ({ atOp, downtimeMs }: PlannedFault) => {
    if (failure !== undefined) return;
    const killedAt = Date.now();
    await killAndRestart(stack, kind, atOp, downtimeMs);
    faults.push({ kind, atOp, downtimeMs, killedAt, restartedAt: Date.now() });
  };
  return {
    onStart(op) {
      while (pending[0]?.atOp === op.index) {
        const fault = pending.shift()!;
        // Caught here so that a failed restart cannot be an unhandled rejection before done().
        chain = chain.then(() => inject(fault)).catch((err: unknown) => void (failure ??= err));
      }
    },
    async done() {
      await chain;
      if (failure !== undefined) throw failure;
      return faults;
    },
  };
}

async function killAndRestart(stack: Stack, kind: FaultKind, atOp: number, downtimeMs: number): Promise<void> {
  if (kind === 'server' && downtimeMs === 0) return stack.server.crashAndRestart();
  const target = await victim(stack, kind, atOp);
  await target.kill();
  await delay(downtimeMs);
  await target.restart();
  // A primary killed before its replacement has a replica would take acknowledged work with it.
  await stack.redisSentinel?.healthy(60_000);
}

/** The process a fault kills: SIGKILL, and start again on the same data, directory and port. */
async function victim(
  stack: Stack,
  kind: FaultKind,
  atOp: number,
): Promise<{ kill(): Promise<void>; restart(): Promise<void> }> {
  if (kind === 'server') return stack.server;
  if (kind === 'sdk') return stack.service;
  if (stack.redisSentinel) {
    const primary = await stack.redisSentinel.primary();
    const set = stack.redisSentinel;
    return { kill: () => primary.halt({ kill: true }), restart: () => set.rejoin(primary) };
  }
  const masters = stack.redisCluster?.masters;
  const redis = stack.redis ?? masters?.[atOp % masters.length];
  if (!redis) throw new Error('a Redis fault needs the Redis store');
  return { kill: () => redis.halt({ kill: true }), restart: () => redis.resume() };
}
