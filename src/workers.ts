/**
 * Several processes serving at once on one machine (`--workers N`, N > 1): the process started
 * is the primary, which only forks and watches the workers; each worker is a whole server and a
 * node of the cluster over the store (src/cluster/): the Redis store, or the embedded store's
 * files, which the workers share (store/embedded/coordination.ts). A worker owns a share of the
 * partitions through leases and forwards what belongs to another worker over the node port, as
 * nodes on different machines do. The ingress and admin ports are shared through node:cluster,
 * each worker accepting on the same listening sockets (not through the primary: see
 * `runPrimary`); each worker's node port is its own.
 *
 * Durability holds as with separate nodes: a commit is fenced by its partition's lease epoch,
 * and each worker keeps its node id in its own data dir (`worker-<i>`), locked while it lives,
 * so a worker started again after a crash takes its own leases back at once, and only once the
 * crashed one is gone. A worker whose primary dies (SIGKILL) exits at once: nothing it
 * acknowledged is lost, and the next primary's workers recover the rest.
 */
import cluster, { type Worker } from 'node:cluster';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';
import { claimDataDir } from './data-dir.js';
import type { Logger } from './telemetry/log.js';

/** Set by the primary in each worker's environment. */
const WORKER_INDEX = 'REDSTATE_WORKER_INDEX';

export interface ServedPorts {
  ingress: number;
  admin: number;
  node: number;
}

interface ReadyMessage {
  redstate: 'ready';
  ports: ServedPorts;
}

const isReady = (m: unknown): m is ReadyMessage =>
  typeof m === 'object' && m !== null && (m as { redstate?: unknown }).redstate === 'ready';

/** This process's worker index, or undefined when it is no worker (one process, or the primary). */
export function workerIndex(): number | undefined {
  return cluster.isWorker ? Number(process.env[WORKER_INDEX]) : undefined;
}

/**
 * A worker's config: its own node id; the configured node port is worker 0's, the others take
 * one the kernel gives (the nodes find each other through the store).
 */
export function workerConfig(config: Config, index: number): Config {
  return {
    ...config,
    nodeId: config.nodeId === undefined ? undefined : `${config.nodeId}-w${index}`,
    nodePort: index === 0 ? config.nodePort : 0,
  };
}

const WORKER_DIR = /^worker-\d+$/;

/** A worker's own directory within the data dir: its node id, and its lock while it lives. */
export function workerDir(config: Config, index: number): string {
  return join(config.dataDir, `worker-${index}`);
}

/**
 * Resolves once no worker of an earlier primary lives on `dataDir` (their locks are free): a
 * worker exits as soon as its primary is gone, but until it has, it may still commit to the
 * embedded store's files, which a server alone there writes unfenced, and it holds the shared
 * listening sockets.
 */
export async function awaitWorkersGone(dataDir: string): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(dataDir).filter((name) => WORKER_DIR.test(name));
  } catch {
    return;
  }
  for (const name of names) (await claimDataDir(join(dataDir, name), undefined)).release();
}

/**
 * In a worker, from its start: exits once the primary is gone (killed). Nobody hands it
 * connections any more, and the next primary's worker of the same index waits for this one's
 * data-dir lock.
 */
export function exitWithPrimary(): void {
  process.on('disconnect', () => process.exit(1));
  // node:cluster's own messages to the primary (the acknowledgement of a connection handed
  // over) fail on a channel already closed with an 'error' event, before 'disconnect' comes.
  cluster.worker?.on('error', () => process.exit(1));
}

/** In a worker: tells the primary it serves (a primary gone meanwhile is `exitWithPrimary`'s). */
export function reportWorkerReady(ports: ServedPorts): void {
  // With a callback a closed channel is an error passed here, not one thrown at the process.
  process.send?.({ redstate: 'ready', ports } satisfies ReadyMessage, undefined, {}, () => undefined);
}

/**
 * Opens the embedded store once before the workers share it, so that an older layout is
 * upgraded by one process (store/embedded/layout.ts), not raced by all.
 */
async function prepareSharedFiles(dataDir: string): Promise<void> {
  const { EmbeddedStore } = await import('./store/embedded/embedded-store.js');
  await (await EmbeddedStore.open(dataDir)).close();
}

/** How soon a crashed worker is started again: at once, but not in a tight loop. */
const FIRST_RESTART_MS = 100;
const LAST_RESTART_MS = 10_000;
/** A worker that served this long before it died starts again after the first delay. */
const STABLE_MS = 10_000;

/**
 * The wait before a dead worker starts again: the first delay after a worker that had run a
 * while, else twice the last one, up to the last (a worker that cannot start, a broken config
 * or a full disk, is not forked ten times a second).
 */
export function restartDelay(previousMs: number | undefined, ranMs: number): number {
  if (previousMs === undefined || ranMs >= STABLE_MS) return FIRST_RESTART_MS;
  return Math.min(2 * previousMs, LAST_RESTART_MS);
}

/**
 * The primary: forks the workers, logs the readiness line once every worker serves, starts a
 * worker again when it dies, and stops them all on SIGTERM/SIGINT. Resolves once they are stopped.
 */
export async function runPrimary(config: Config, log: Logger): Promise<void> {
  const startedAt = performance.now();
  // One primary per data dir; each worker locks its own sub-directory.
  const dataDir = await claimDataDir(config.dataDir, config.nodeId);
  // An earlier primary's workers (it was killed) hold the shared listening sockets until they
  // exit: the ports can be listened on again only then.
  await awaitWorkersGone(config.dataDir);
  if (!config.redisUrl) await prepareSharedFiles(config.dataDir);
  const live = new Map<number, Worker>();
  // The ports each worker serves on, from its first readiness message on.
  const serving = new Map<number, ServedPorts>();
  let stopping = false;
  let startFailed: (err: Error) => void = () => {};
  let allServing: () => void = () => {};
  const started = new Promise<void>((resolve, reject) => {
    allServing = resolve;
    startFailed = reject;
  });

  // Per worker index, the wait before its last restart.
  const delays = new Map<number, number>();
  const fork = (index: number) => {
    const forkedAt = performance.now();
    const worker = cluster.fork({ [WORKER_INDEX]: String(index) });
    live.set(index, worker);
    worker.on('message', (m: unknown) => {
      if (!isReady(m)) return;
      serving.set(index, m.ports);
      if (serving.size === config.workers) allServing();
    });
    worker.on('exit', (code, signal) => {
      live.delete(index);
      if (stopping) return;
      if (serving.size < config.workers) {
        startFailed(new Error(`worker ${index} exited with ${signal ?? code} before every worker served`));
        return;
      }
      const delay = restartDelay(delays.get(index), performance.now() - forkedAt);
      delays.set(index, delay);
      log.error(
        { worker: index, code, signal, restart_in_ms: delay },
        `worker ${index} exited (${signal ?? code}), starting it again`,
      );
      setTimeout(() => !stopping && fork(index), delay);
    });
  };

  const stopAll = async (signal: NodeJS.Signals) => {
    const exits = [...live.values()].map((w) => new Promise((r) => w.once('exit', r)));
    for (const w of live.values()) w.process.kill(signal);
    await Promise.all(exits);
  };

  // Each worker accepts on the shared listening sockets itself. With node:cluster's default
  // (the primary accepts and hands each connection over), a worker killed before the primary
  // heard that it took a connection leaves the primary's copy of that socket open for good:
  // its client waits until its own timeout (one request per worker killed, measured).
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  for (let i = 0; i < config.workers; i++) fork(i);
  try {
    await started;
  } catch (err) {
    stopping = true;
    await stopAll('SIGKILL');
    dataDir.release();
    throw err;
  }
  // The ingress and admin ports are shared; the node port named is worker 0's.
  const { ingress, admin, node } = serving.get(0)!;
  log.info(
    {
      ports: { ingress, admin, node },
      workers: config.workers,
      startup_ms: Math.round(performance.now() - startedAt),
    },
    `ingress on :${ingress}, admin on :${admin}, node on :${node} (${config.workers} workers)`,
  );

  await new Promise<void>((resolve, reject) => {
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn({ signal }, `${signal} received again, stopping the workers at once`);
        void stopAll('SIGKILL');
        return;
      }
      stopping = true;
      log.info({ signal, grace_ms: config.shutdownGrace }, `${signal} received, stopping the workers`);
      stopAll('SIGTERM').then(resolve, reject);
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
  dataDir.release();
}
