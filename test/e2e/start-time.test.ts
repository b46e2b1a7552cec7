/**
 * How long a built tree takes from start to healthy, measured the way a user starts it:
 * `node --enable-source-maps dist/src/main.js` (what `npm start` runs) and `npm start` itself
 * (its `prestart` only checks that the build is current). Reported, with a generous bound only:
 * the machine is shared, and the point is "well under a second", not a timing race.
 */
import test from 'ava';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';

const BOUND_MS = 5_000;
const RUNS = 3;

async function untilHealthy(proc: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}:\n${output()}`);
    if (Date.now() > deadline) throw new Error(`not healthy within 60 s:\n${output()}`);
    const m = /ingress on :(\d+), admin on :(\d+)/.exec(output());
    if (m) {
      const [ingress, admin] = await Promise.all([
        fetch(`http://127.0.0.1:${m[1]}/restate/health`),
        fetch(`http://127.0.0.1:${m[2]}/health`),
      ]);
      if (ingress.status === 200 && admin.status === 200) return;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Milliseconds from spawn to both health endpoints answering 200. */
async function timeToHealthy(command: string, args: string[]): Promise<number> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'redstate-start-'));
  const env = {
    ...process.env,
    REDSTATE_HOST: '127.0.0.1',
    REDSTATE_DATA_DIR: dataDir,
    REDSTATE_INGRESS_PORT: '0',
    REDSTATE_ADMIN_PORT: '0',
    REDSTATE_NODE_PORT: '0',
  };
  const started = performance.now();
  // Its own process group, so `npm start`'s shell and node stop together.
  const proc = spawn(command, args, { cwd: projectRoot(), env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  try {
    await untilHealthy(proc, () => output);
    return performance.now() - started;
  } finally {
    const exited = new Promise((r) => proc.once('exit', r));
    if (proc.exitCode === null) process.kill(-proc.pid!, 'SIGTERM');
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

test.serial('node dist/src/main.js is healthy well within the bound', async (t) => {
  const runs: number[] = [];
  for (let i = 0; i < RUNS; i++)
    runs.push(await timeToHealthy(process.execPath, ['--enable-source-maps', 'dist/src/main.js']));
  t.log(`start to healthy: median ${median(runs).toFixed(0)} ms (${runs.map((r) => r.toFixed(0)).join(', ')} ms)`);
  t.true(median(runs) < BOUND_MS);
});

test.serial('npm start on a built tree does not build again', async (t) => {
  const fresh = spawnSync(process.execPath, ['scripts/build-stamp.mjs', 'fresh'], { cwd: projectRoot() });
  if (fresh.status !== 0) {
    // Compiled with plain `tsc` (not `npm run build`): npm start would rebuild, which is not what this measures.
    t.log('skipped: the build stamp is older than the sources (run `npm run build`)');
    t.pass();
    return;
  }
  const ms = await timeToHealthy('npm', ['start']);
  t.log(`npm start to healthy: ${ms.toFixed(0)} ms`);
  t.true(ms < BOUND_MS);
});

test.serial('--help answers without loading the server', async (t) => {
  const started = performance.now();
  const r = spawnSync(process.execPath, ['dist/src/main.js', '--help'], { cwd: projectRoot(), encoding: 'utf8' });
  const ms = performance.now() - started;
  t.is(r.status, 0);
  t.log(`--help: ${ms.toFixed(0)} ms`);
  t.true(ms < BOUND_MS);
});
