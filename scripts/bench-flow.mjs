#!/usr/bin/env node
// Flow-control benchmark, side by side: N scoped sends (limit key per sender) under a rule of
// concurrency C, to a handler that holds its slot for --ms (two ctx.run steps around a durable
// sleep, test/support/services/flow.mjs). Measures how fast all of them are executed and the
// most that held a slot at once (counted in the SDK service), against the reference
// restate-server 1.7.12 with vqueues enabled and against redstate.
//
//   flock /tmp/redstate-bench.lock npm run bench:flow -- [--n 2000] [--concurrency 8] [--ms 20] [--store embedded|redis] [--skip-ref]
//
// The reference binary comes from the bench work dir that `npm run bench` prepares
// (/tmp/redstate-bench); run that once first.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { option, sleep, startRedstate, waitHttp } from './bench-common.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REF_BIN = path.join(
  os.tmpdir(),
  'redstate-bench/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server',
);
const args = process.argv.slice(2);
const opt = (name, def) => option(args, name, def);
const N = Number(opt('n', '2000'));
const CAP = Number(opt('concurrency', '8'));
const MS = Number(opt('ms', '20'));
const SENDERS = 64;
const store = opt('store', 'embedded');

function startService() {
  const proc = spawn(
    process.execPath,
    ['--import', path.join(ROOT, 'test/support/poly.mjs'), path.join(ROOT, 'test/support/services/flow.mjs')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const ready = /READY (\d+)/.exec(out);
      const counts = /COUNTS (\d+)/.exec(out);
      if (ready && counts) resolve({ proc, port: Number(ready[1]), counts: `http://127.0.0.1:${counts[1]}` });
    });
    proc.once('exit', (code) => reject(new Error(`service exited ${code}`)));
  });
}

async function startReference(dir) {
  const env = {
    ...process.env,
    RESTATE_BASE_DIR: dir,
    RESTATE_INGRESS__BIND_ADDRESS: '127.0.0.1:28080',
    RESTATE_ADMIN__BIND_ADDRESS: '127.0.0.1:29070',
    RESTATE_BIND_ADDRESS: '127.0.0.1:25122',
    RESTATE_ADVERTISED_ADDRESS: 'http://127.0.0.1:25122/',
    RESTATE_EXPERIMENTAL_ENABLE_VQUEUES: 'true',
    RESTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7: 'true',
  };
  const proc = spawn(REF_BIN, ['--no-logo'], { env, stdio: 'ignore' });
  await waitHttp('http://127.0.0.1:29070/health');
  await waitHttp('http://127.0.0.1:28080/restate/health');
  return { proc, ingress: 'http://127.0.0.1:28080', admin: 'http://127.0.0.1:29070', redisPid: undefined };
}

async function startOurs(dir) {
  const { server, redisPid } = await startRedstate(ROOT, store, dir, {
    REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES: 'true',
    REDSTATE_LOG_LEVEL: 'warn',
  });
  await waitHttp('http://127.0.0.1:19170/health');
  return { proc: server, ingress: 'http://127.0.0.1:18180', admin: 'http://127.0.0.1:19170', redisPid };
}

async function post(url, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${text}`);
  return text;
}

async function run(label, start) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redstate-bench-flow-'));
  const service = await startService();
  const server = await start(dir);
  try {
    await post(`${server.admin}/deployments`, { uri: `http://127.0.0.1:${service.port}`, force: true });
    const rule = await fetch(`${server.admin}/limits/rules`, {
      method: 'PUT',
      body: JSON.stringify([{ pattern: 'bench', limits: { concurrency: CAP } }]),
      headers: { 'content-type': 'application/json' },
    });
    if (!rule.ok) throw new Error(`rule: ${rule.status} ${await rule.text()}`);
    // The ingress routes a call once the registration reached it.
    for (let i = 0; ; i++) {
      const res = await fetch(`${server.ingress}/restate/scope/warm/call/Flow/work`, {
        method: 'POST',
        body: JSON.stringify({ tag: 'warm', ms: 0 }),
        headers: { 'content-type': 'application/json' },
      });
      await res.text();
      if (res.ok) break;
      if (i > 100) throw new Error('ingress never routed the call');
      await sleep(100);
    }
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: SENDERS }, async (_, s) => {
        while (next < N) {
          const i = next++;
          await post(
            `${server.ingress}/restate/scope/bench/send/Flow/work`,
            { tag: `b${i}`, ms: MS },
            { 'x-restate-limit-key': `s${s % 8}` },
          );
        }
      }),
    );
    const sentMs = performance.now() - t0;
    let counts;
    for (;;) {
      counts = await (await fetch(service.counts)).json();
      const ended = Object.keys(counts).filter((k) => k.startsWith('b') && k.endsWith(':end')).length;
      if (ended >= N) break;
      if (performance.now() - t0 > 600_000) throw new Error(`only ${ended} of ${N} executed`);
      await sleep(50);
    }
    const doneMs = performance.now() - t0;
    return {
      label,
      n: N,
      cap: CAP,
      handlerMs: MS,
      sendPerSec: Math.round((N / sentMs) * 1000),
      executedPerSec: Math.round((N / doneMs) * 1000),
      maxActive: counts.maxActive,
      doneMs: Math.round(doneMs),
    };
  } finally {
    server.proc.kill('SIGTERM');
    if (server.redisPid) process.kill(server.redisPid, 'SIGTERM');
    service.proc.kill('SIGTERM');
    await sleep(800);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const results = [];
if (!args.includes('--skip-ref')) results.push(await run('restate-server 1.7.12 (vqueues)', startReference));
results.push(await run(`redstate (${store})`, startOurs));
console.table(results);
if (results.length === 2) {
  const [ref, ours] = results;
  console.log(
    `executed/s ratio (redstate / reference): ${(ours.executedPerSec / ref.executedPerSec).toFixed(2)}; max concurrency ${ours.maxActive} vs ${ref.maxActive} (cap ${CAP})`,
  );
}
fs.writeFileSync(path.join(os.tmpdir(), `redstate-bench-flow-${store}.json`), JSON.stringify(results, null, 1));
