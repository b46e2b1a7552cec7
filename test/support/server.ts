/**
 * The redstate server as a child process, the way a user runs it: `node dist/src/main.js`
 * with environment configuration, killable with SIGKILL and restartable on the same data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, retryIfPortTaken } from './ports.js';

/** The built server's entry point. */
export const MAIN = path.resolve(process.cwd(), 'dist/src/main.js');

export interface RedstateProcess {
  ingress: string;
  admin: string;
  /** The node port's base URL (`/metrics`). */
  node: string;
  /** Its data dir (a fresh temp dir, removed by `stop`). */
  dataDir: string;
  /** The running process's id (changes on restart). */
  pid(): number;
  /** Everything the process printed, for failure messages. */
  output(): string;
  /** SIGKILL: no chance to flush or clean anything up. */
  kill(): Promise<void>;
  /** Sends a signal and returns at once (SIGSTOP / SIGCONT: a paused node, a zombie). */
  signal(sig: NodeJS.Signals): void;
  /** SIGTERM, as an operator stops it; resolves with the exit code once it has exited. The data stays. */
  terminate(): Promise<number | null>;
  /** Starts the server again on the same ports and data. */
  restart(): Promise<void>;
  /**
   * SIGKILL, and a new process on the same ports and data at once, without waiting for the
   * killed one to exit: a supervisor that restarts a crashed server immediately.
   */
  crashAndRestart(): Promise<void>;
  stop(): Promise<void>;
}

export interface RedstateOptions {
  /** Redis store; without it the embedded store in a fresh temp dir. */
  redisUrl?: string;
  env?: Record<string, string>;
  /** An existing data dir (kept by `stop`); default a fresh temp dir. */
  dataDir?: string;
}

type Ports = { ingress: number; admin: number; node: number };

async function freePorts(): Promise<Ports> {
  return { ingress: await freePort(), admin: await freePort(), node: await freePort() };
}

async function waitReady(proc: ChildProcess, output: () => string): Promise<Ports> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`redstate exited with ${proc.exitCode}:\n${output()}`);
    const m = /ingress on :(\d+), admin on :(\d+), node on :(\d+)/.exec(output());
    if (m) return { ingress: Number(m[1]), admin: Number(m[2]), node: Number(m[3]) };
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`redstate did not become ready:\n${output()}`);
}

export async function startRedstate(opts: RedstateOptions = {}): Promise<RedstateProcess> {
  // Chosen below 32768 (./ports.ts) at the first start, where a restart finds them free again.
  let ports: Ports = { ingress: 0, admin: 0, node: 0 };
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'redstate-data-')));
  let log = '';
  let proc: ChildProcess;
  const env = {
    ...process.env,
    REDSTATE_HOST: '127.0.0.1',
    REDSTATE_DATA_DIR: dataDir,
    // Tests that end with calls still waiting need not wait the default 10 s.
    REDSTATE_SHUTDOWN_GRACE: '2000',
    ...(opts.redisUrl ? { REDSTATE_REDIS_URL: opts.redisUrl } : {}),
    ...opts.env,
  };
  const launch = async () => {
    const from = log.length;
    proc = spawn(process.execPath, ['--enable-source-maps', MAIN], {
      env: {
        ...env,
        REDSTATE_INGRESS_PORT: String(ports.ingress),
        REDSTATE_ADMIN_PORT: String(ports.admin),
        REDSTATE_NODE_PORT: String(ports.node),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    ports = await waitReady(proc, () => log.slice(from));
  };
  const exited = () =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) resolve();
      else proc.once('exit', () => resolve());
    });
  await retryIfPortTaken(async () => {
    ports = await freePorts();
    await launch();
  });
  return {
    ingress: `http://127.0.0.1:${ports.ingress}`,
    admin: `http://127.0.0.1:${ports.admin}`,
    node: `http://127.0.0.1:${ports.node}`,
    dataDir,
    output: () => log,
    pid: () => proc.pid!,
    async kill() {
      proc.kill('SIGKILL');
      await exited();
    },
    signal(sig) {
      proc.kill(sig);
    },
    async terminate() {
      proc.kill('SIGTERM');
      await exited();
      return proc.exitCode;
    },
    async restart() {
      log += '\n--- restart ---\n';
      await launch();
    },
    async crashAndRestart() {
      proc.kill('SIGKILL');
      log += '\n--- restart right after SIGKILL ---\n';
      await launch();
    },
    async stop() {
      proc.kill('SIGTERM');
      await exited();
      if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** `node dist/src/main.js` with `env` until it exits by itself: a start that must be refused. */
export async function runToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, REDSTATE_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}
