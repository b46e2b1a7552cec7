/**
 * A throwaway redis-server for tests: the machine's binary on a free loopback port with its
 * own empty directory. It never uses 6379, so a developer's Redis is never touched.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export interface StartRedisOptions {
  /** Default 'yes'; 'no' to test the durability warning. */
  appendonly?: 'yes' | 'no';
  /** Default 'always', the durable setting (design.md, "Store"). */
  appendfsync?: 'always' | 'everysec' | 'no';
  /** Sets `requirepass`; the url then carries it. */
  password?: string;
  /** More `--name value` arguments for redis-server. */
  args?: string[];
  /** Run a Sentinel (`redis-server sentinel.conf --sentinel`) with this configuration instead. */
  sentinel?: string;
}

export interface RunningRedis {
  url: string;
  port: number;
  dir: string;
  /** Stops the server, keeping its directory. `kill: true` sends SIGKILL: no shutdown hook runs, as in a crash. */
  halt(opts?: { kill?: boolean }): Promise<void>;
  /** Starts a halted server again on the same port and directory; it reloads its AOF. `args`: more for this start only. */
  resume(args?: string[]): Promise<void>;
  /** `halt` then `resume`. */
  restart(opts?: { kill?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(opts: StartRedisOptions = {}): Promise<RunningRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-redis-'));
  let port = 0;
  let child: ChildProcess | undefined;
  // Another process can take the port between freePort() and redis-server's bind.
  for (let attempt = 1; !child; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, dir, opts);
    } catch (err) {
      if (attempt >= 5) {
        await rm(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
  let running: ChildProcess = child;
  const handle: RunningRedis = {
    url: opts.password
      ? `redis://:${encodeURIComponent(opts.password)}@127.0.0.1:${port}`
      : `redis://127.0.0.1:${port}`,
    port,
    dir,
    async halt({ kill = false } = {}) {
      await terminate(running, kill ? 'SIGKILL' : 'SIGTERM');
    },
    async resume(args = []) {
      running = await launch(port, dir, { ...opts, args: [...(opts.args ?? []), ...args] });
    },
    async restart(how) {
      await handle.halt(how);
      await handle.resume();
    },
    async stop() {
      await terminate(running, 'SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

/** A server must not outlive the test process, even when a test times out or crashes. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

async function launch(port: number, dir: string, opts: StartRedisOptions): Promise<ChildProcess> {
  // Sentinel rewrites its configuration file: written once, kept across restarts.
  const conf = join(dir, 'sentinel.conf');
  if (opts.sentinel !== undefined && !existsSync(conf)) await writeFile(conf, opts.sentinel);
  const common = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no', '--logfile', ''];
  const args =
    opts.sentinel !== undefined
      ? [conf, '--sentinel', ...common]
      : [
          ...common,
          '--appendonly',
          opts.appendonly ?? 'yes',
          '--appendfsync',
          opts.appendfsync ?? 'always',
          '--save',
          '',
          ...(opts.password ? ['--requirepass', opts.password] : []),
          ...(opts.args ?? []),
        ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited = false;
  live.add(child);
  child.once('exit', () => {
    exited = true;
    live.delete(child);
  });
  child.once('error', (err) => {
    exited = true;
    collect(Buffer.from(`spawn failed: ${err.message}`));
  });
  const deadline = Date.now() + 10_000;
  // Waiting for *our* pid, not just any PONG: if another server holds the port, ours exits.
  while ((await serverPid(port, opts.password)) !== child.pid) {
    if (exited) throw new Error(`redis-server on port ${port} exited before answering:\n${output}`);
    if (Date.now() > deadline) {
      await terminate(child, 'SIGKILL');
      throw new Error(`redis-server on port ${port} did not answer within 10 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return child;
}

/** The process id of the Redis answering on `port`, from INFO server. */
function serverPid(port: number, password?: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (pid: number | undefined) => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(500, () => done(undefined));
    socket.on('error', () => done(undefined));
    const auth = password === undefined ? '' : `AUTH ${JSON.stringify(password)}\r\n`;
    socket.on('connect', () => socket.write(`${auth}INFO server\r\n`));
    socket.on('data', (data) => {
      reply += data.toString();
      if (auth && reply.startsWith('+OK\r\n')) reply = reply.slice(5);
      if (reply.startsWith('-')) return done(undefined);
      const match = /process_id:(\d+)\r\n/.exec(reply);
      if (match) done(Number(match[1]));
    });
  });
}

function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}
