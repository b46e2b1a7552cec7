#!/usr/bin/env node
// Issue 13's scaling figure: throughput of a no-op call (as S1b) and of object adds over 1000
// keys (as S4) with 1, 2 and 3 redstate nodes over one redis-server (AOF, appendfsync always),
// one SDK process, c=64 closed-loop clients spread evenly over the nodes' ingress ports.
// The shared harness drives one ingress, so this script has its own small client.
//
//   node scripts/bench-nodes.mjs [--nodes 1,2,3] [--seconds 8] [--no-build]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sleep } from './bench-common.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(ROOT);
const { values: args } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1,2,3' },
    seconds: { type: 'string', default: '8' },
    'no-build': { type: 'boolean', default: false },
  },
});
if (!args['no-build'])
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
const { startCluster } = await import('../dist/test/support/cluster.js');
const CONCURRENCY = 64;
const seconds = Number(args.seconds);

function post(agent, base, p, body) {
  return new Promise((resolve) => {
    const req = http.request(
      `${base}/${p}`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/** CPU seconds used so far: by the whole machine (all cores, /proc/stat) and by each pid (/proc/<pid>/stat). */
function cpuNow(pids) {
  const tick = 100; // USER_HZ on Linux
  const [, ...cpu] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const busy = cpu.reduce((a, b) => a + b, 0) - cpu[3] - cpu[4]; // all but idle and iowait
  const of = (pid) => {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / tick; // utime + stime
  };
  return { machine: busy / tick, pids: pids.map(of) };
}

/** Where the cores went over the window: the machine's busy share (of every core) and the nodes' share. */
function cpuShare(before, after, secs) {
  const nodes = after.pids.reduce((a, v, i) => a + v - before.pids[i], 0);
  return { machine: (after.machine - before.machine) / secs, nodes: nodes / secs, cores: os.cpus().length };
}

/** Closed loop: CONCURRENCY workers, worker i on node i mod n; ops/s over the measured seconds and the CPU used meanwhile. */
async function load(ingresses, op, pids) {
  const agents = ingresses.map(() => new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY }));
  let ok = 0;
  let errors = 0;
  let measuring = false;
  let stop = false;
  const worker = async (w) => {
    for (let i = 0; !stop; i++) {
      const status = await post(agents[w % ingresses.length], ingresses[w % ingresses.length], ...op(w, i));
      if (!measuring) continue;
      if (status === 200) ok++;
      else errors++;
    }
  };
  const running = Array.from({ length: CONCURRENCY }, (_, w) => worker(w));
  await sleep(2000);
  measuring = true;
  const before = cpuNow(pids);
  await sleep(seconds * 1000);
  const cpu = cpuShare(before, cpuNow(pids), seconds);
  measuring = false;
  stop = true;
  await Promise.all(running);
  for (const a of agents) a.destroy();
  return { rate: ok / seconds, errors, cpu };
}

const noop = () => ['restate/call/Durable/greet', '"x"'];
const add = (w, i) => [`restate/call/Tally/k${(w * 7919 + i) % 1000}/add`, '1'];

console.log(
  `c=${CONCURRENCY}, ${seconds} s measured after 2 s warm-up, one SDK process, one redis-server (appendfsync always)`,
);
const rows = [];
for (const n of args.nodes.split(',').map(Number)) {
  const stack = await startCluster(n, { serviceFile: 'durable.mjs' });
  try {
    const ingresses = stack.nodes.map((node) => node.server.ingress);
    const pids = stack.nodes.map((node) => node.server.pid());
    const s1b = await load(ingresses, noop, pids);
    const s4 = await load(ingresses, add, pids);
    rows.push({ n, s1b, s4 });
    const busy = ({ cpu }) =>
      `machine ${(cpu.machine * 100).toFixed(0)}% of ${cpu.cores * 100}%, nodes ${(cpu.nodes * 100).toFixed(0)}%`;
    console.log(
      `${n} node(s): no-op call ${s1b.rate.toFixed(0)}/s (${s1b.errors} errors; ${busy(s1b)}), object add over 1000 keys ${s4.rate.toFixed(0)}/s (${s4.errors} errors; ${busy(s4)})`,
    );
  } finally {
    await stack.stop();
  }
}
const one = rows.find((r) => r.n === 1);
if (one)
  for (const r of rows)
    console.log(
      `${r.n} node(s) vs 1: no-op ${(r.s1b.rate / one.s1b.rate).toFixed(2)}x, add ${(r.s4.rate / one.s4.rate).toFixed(2)}x`,
    );
