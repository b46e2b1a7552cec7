/**
 * A throwaway `nats-server -js` for tests (Debian package `nats-server`): a free loopback
 * port and its own JetStream directory, restartable on both, like test/support/redis.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export interface RunningNats {
  url: string;
  port: number;
  /** SIGTERM (or SIGKILL), then the same server again on the same port and directory. */
  restart(opts?: { kill?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(500, () => (socket.destroy(), resolve(false)));
    socket.on('error', () => resolve(false));
    // The server speaks first: an INFO line means it is ours and up.
    socket.on('data', (d) => (socket.destroy(), resolve(d.toString().startsWith('INFO'))));
  });
}

async function launch(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('nats-server', ['-js', '-sd', dir, '-a', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  live.add(child);
  child.once('exit', () => live.delete(child));
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nats-server on port ${port} did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return child;
}

async function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

export async function startNats(): Promise<RunningNats> {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-nats-'));
  const port = await freePort();
  let child = await launch(port, dir);
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async restart({ kill = false } = {}) {
      await terminate(child, kill ? 'SIGKILL' : 'SIGTERM');
      child = await launch(port, dir);
    },
    async stop() {
      await terminate(child, 'SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
