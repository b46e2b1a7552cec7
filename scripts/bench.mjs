#!/usr/bin/env node
// Runs ../shared/bench against the reference restate-server 1.7.12 and against redstate, in one
// session on this machine, and prints the ratios (ours / reference) per scenario.
//
//   npm run bench -- [--store embedded|redis] [--repeat 3] [--only S1a,S1b,S2] [--skip-ref] [--alternate 1] [--no-build]
//   --alternate N runs reference, redstate, reference, redstate ... N times each and compares the
//   medians over all their rounds: the machine's speed drifts over minutes, and alternating
//   spreads that drift over both sides.
//   BENCH_CPU_PROF=<dir> also writes a CPU profile of redstate (node --cpu-prof) into <dir>;
//   BENCH_SERVER_FLAGS="--max-semi-space-size=4 ..." are node flags for the server alone.
//   After the comparison: where each scenario stands against the goal (with the reference of
//   this run), each server's first round against its later ones (with --repeat 2 or more: V8's
//   warm-up), and redstate's CPU per operation against its budget (bench-goals.mjs).
//   --n-sleep N --sleep-ms MS --n-send N --n-delayed N --duration S pass through to the harness.
//
// What the server costs is counted with the store it needs: with --store redis, redis-server runs
// as a child of the server process, so the harness's "server" CPU and RSS are the sum of both
// (redis-server does the Lua and the fsyncs). bench-resources.mjs samples each part on its own
// and prints the split; on the embedded store it splits the server's RSS into anonymous memory
// and mapped file pages (LMDB's map).
//
// redstate runs with fsync-before-ack, like Restate: the embedded store commits synchronously;
// with --store redis a fresh redis-server is started with `appendonly yes`, `appendfsync always`.
// The bench folder is copied to a temp dir (shared/ is read-only) and installed there once.
import { execFileSync, spawn } from 'node:child_process';
import { PartSampler, printSplit, splitRuns } from './bench-resources.mjs';
import { median, printCpuBudget, printGoals, printWarmup } from './bench-goals.mjs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { option, sleep, startRedstate, waitHttp } from './bench-common.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHARED_BENCH = path.resolve(ROOT, '../shared/bench');
const WORK = path.join(os.tmpdir(), 'redstate-bench');
const args = process.argv.slice(2);
const opt = (name, def) => option(args, name, def);
const store = opt('store', 'embedded');
const repeat = opt('repeat', '3');
const only = opt('only', '');
const skipRef = args.includes('--skip-ref');
const noBuild = args.includes('--no-build');
const alternate = Number(opt('alternate', '1'));
const passThrough = ['n-sleep', 'sleep-ms', 'n-send', 'n-delayed', 'duration'].flatMap((k) =>
  opt(k) ? [`--${k}`, opt(k)] : [],
);
const runArgs = ['--repeat', repeat, ...(only ? ['--only', only] : []), ...passThrough];

const sh = (cmd, argv, o = {}) => execFileSync(cmd, argv, { stdio: 'inherit', ...o });

function prepare() {
  if (!fs.existsSync(path.join(WORK, 'node_modules/@restatedev/restate-server-linux-x64'))) {
    fs.rmSync(WORK, { recursive: true, force: true });
    fs.cpSync(SHARED_BENCH, WORK, { recursive: true });
    fs.chmodSync(WORK, 0o755);
    for (const f of fs.readdirSync(WORK)) fs.chmodSync(path.join(WORK, f), 0o755);
    for (const f of fs.readdirSync(path.join(WORK, 'scripts'))) fs.chmodSync(path.join(WORK, 'scripts', f), 0o755);
    sh('npm', ['ci', '--no-audit', '--no-fund'], { cwd: WORK });
  }
  if (!noBuild) sh('npm', ['run', 'build'], { cwd: ROOT });
}

async function runReference(n = 0) {
  const out = path.join(WORK, n ? `ref-${n}.json` : 'ref.json');
  sh('bash', ['scripts/baseline.sh', ...runArgs], {
    cwd: WORK,
    env: { ...process.env, OUT: out, REF_DIR: path.join(WORK, 'ref') },
  });
  return out;
}

async function runOurs(n = 0) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'redstate-bench-data-'));
  const { server, redisPid } = await startRedstate(ROOT, store, dataDir);
  const out = path.join(WORK, n ? `ours-${store}-${n}.json` : `ours-${store}.json`);
  const parts = new PartSampler(server.pid, redisPid);
  try {
    await waitHttp('http://127.0.0.1:19170/health');
    parts.start();
    await runHarness(
      [
        'run.mjs',
        '--ingress',
        'http://127.0.0.1:18180',
        '--admin',
        'http://127.0.0.1:19170',
        '--service-port',
        '19180',
        '--server-pid',
        String(server.pid),
        '--label',
        `redstate (${store} store)`,
        '--out',
        out,
        ...runArgs,
      ],
      (line) => parts.mark(line),
    );
    parts.stop();
    const result = JSON.parse(fs.readFileSync(out, 'utf8'));
    splitRuns(result.runs, parts);
    fs.writeFileSync(out, JSON.stringify({ ...result, medians: mediansOf(result.runs) }, null, 1));
  } finally {
    parts.stop();
    // The server first, and only then its Redis: a node on Redis hands its partitions over on
    // SIGTERM (a second or more), and the next run binds the same ports.
    await stopped(server);
    if (redisPid) process.kill(redisPid, 'SIGTERM');
    await sleep(500);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return out;
}

/** SIGTERM, then the process's exit (SIGKILL after 20 s). */
async function stopped(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

/** The harness, its output passed through line by line (the sampler marks where each scenario ends). */
function runHarness(argv, onLine) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: WORK, stdio: ['ignore', 'pipe', 'inherit'] });
    let rest = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) onLine(line);
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`run.mjs exited with ${code}`))));
  });
}

/** One result file with the rounds of several: medians are taken over all of them. */
function merge(files, out) {
  const results = files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
  const runs = results.flatMap((r) => r.runs);
  fs.writeFileSync(
    out,
    JSON.stringify(
      {
        ...results[0],
        meta: { ...results[0].meta, label: `${results[0].meta.label} x${files.length}` },
        medians: mediansOf(runs),
        runs,
      },
      null,
      1,
    ),
  );
  return out;
}

function mediansOf(runs) {
  const medians = {};
  for (const id of [...new Set(runs.map((r) => r.id))]) {
    const rs = runs.filter((r) => r.id === id && r.summary);
    const m = {
      what: runs.find((r) => r.id === id).what,
      repeats: rs.length,
      failed: runs.filter((r) => r.id === id).length - rs.length,
    };
    for (const k of Object.keys(rs[0]?.summary ?? {})) {
      const vals = rs.map((r) => r.summary[k]);
      m[k] = typeof vals[0] === 'number' ? median(vals) : vals.join(',');
    }
    medians[id] = m;
  }
  return medians;
}

prepare();
let ref;
let ours;
if (alternate > 1) {
  const refs = [];
  const ourFiles = [];
  for (let n = 1; n <= alternate; n++) {
    if (!skipRef) refs.push(await runReference(n));
    ourFiles.push(await runOurs(n));
  }
  ref = skipRef ? path.join(WORK, 'ref.json') : merge(refs, path.join(WORK, 'ref.json'));
  ours = merge(ourFiles, path.join(WORK, `ours-${store}.json`));
} else {
  ref = skipRef ? path.join(WORK, 'ref.json') : await runReference();
  ours = await runOurs();
}
const ourResult = JSON.parse(fs.readFileSync(ours, 'utf8'));
printSplit(ourResult, store);
if (fs.existsSync(ref)) sh('node', ['compare.mjs', ref, ours], { cwd: WORK });
// The goal only against a reference of this session: ratios of different runs mean nothing here.
const refResult = skipRef ? undefined : JSON.parse(fs.readFileSync(ref, 'utf8'));
if (refResult) printGoals(refResult, ourResult);
printWarmup(refResult, ourResult);
printCpuBudget(ourResult, store);
