#!/usr/bin/env node
// Many suspended invocations (issue 17's scale goal): sends N invocations that each sleep, waits
// until all are suspended, reports the server's memory per suspended invocation, then SIGKILLs
// the server while they sleep and reports the time to a healthy restart and until every one
// completed, each exactly once.
//
//   node scripts/scale-sleepers.mjs [--store embedded|redis] [--n 20000] [--sleep-ms 240000] [--concurrency 256] [--no-build]
//
// The sleep must outlast the sending, so that all N are suspended at once.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(ROOT);
const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'embedded' },
    n: { type: 'string', default: '20000' },
    'sleep-ms': { type: 'string', default: '240000' },
    concurrency: { type: 'string', default: '256' },
    'no-build': { type: 'boolean', default: false },
  },
});
const n = Number(args.n);
const sleepMs = Number(args['sleep-ms']);
if (!args['no-build'])
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
const { startStack } = await import('../dist/test/support/stack.js');
const { scrape } = await import('../dist/test/support/prometheus.js');
const { memory } = await import('./bench-resources.mjs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mib = (kib) => Math.round(kib / 102.4) / 10;
async function until(what, cond, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** The process's memory once its RSS has stayed within 1 MiB for 3 s (or after `maxMs`). */
async function settledMemory(pid, maxMs) {
  const deadline = Date.now() + maxMs;
  const readings = [];
  for (;;) {
    const m = memory(pid);
    readings.push(m.anonKiB + m.fileKiB);
    const last = readings.slice(-11);
    if ((last.length === 11 && Math.max(...last) - Math.min(...last) < 1024) || Date.now() > deadline) return m;
    await sleep(1000);
  }
}

/** What the server says of its memory (prom-client's default metrics and ours). */
async function heap() {
  const { scrape: m } = await scrape(`${stack.server.node}/metrics`);
  const mib = (name) => Math.round(m.value(name) / 2 ** 20);
  return `heap used ${mib('nodejs_heap_size_used_bytes')} of ${mib('nodejs_heap_size_total_bytes')} MiB, external ${mib('nodejs_external_memory_bytes')} MiB, invocation actors in memory ${m.value('redstate_actors_in_memory', { kind: 'invocation' })}`;
}

const stack = await startStack(args.store, { serviceFile: 'sleepers.mjs' });
try {
  await sleep(1000);
  const idle = memory(stack.server.pid());
  const sendStart = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Number(args.concurrency) }, async () => {
      while (next < n) {
        const i = next++;
        const res = await stack.ingress.post('Sleeper/sleep/send', { json: { i, ms: sleepMs } });
        if (res.statusCode !== 202) throw new Error(`send ${i}: ${res.statusCode} ${res.body}`);
      }
    }),
  );
  const sentAfter = performance.now() - sendStart;
  // From the metrics, not /query: a query would load DuckDB, whose memory is no invocation's.
  const suspended = async () => {
    const { scrape: m } = await scrape(`${stack.server.node}/metrics`);
    return m.value('redstate_invocations', { status: 'suspended' });
  };
  await until('every invocation suspended', async () => (await suspended()) >= n, sleepMs - sentAfter);
  const allSuspendedAfter = performance.now() - sendStart;
  // What they hold while they sleep, not the garbage of sending them, which the server gives
  // back once idle (src/idle-release.ts: its full collections after a minute of quiet): read
  // once the RSS has settled (the same for 10 s) after that minute, 90 s at most.
  await sleep(62_000);
  const loaded = await settledMemory(stack.server.pid(), 90_000);
  const loadedHeap = await heap();

  await stack.server.kill();
  const killedAt = performance.now();
  await stack.server.restart();
  await until('healthy', async () => (await stack.admin.get('health')).statusCode === 200, 60_000);
  const healthyAfter = performance.now() - killedAt;
  const restarted = memory(stack.server.pid());
  let counts = {};
  await until(
    'every invocation completed',
    async () => Object.keys((counts = await stack.counts())).length >= n,
    sleepMs + 120_000,
  );
  const doneAfterRestart = performance.now() - killedAt;
  // The last sleep was due sleepMs after the last send.
  const lateness = performance.now() - (sendStart + sentAfter + sleepMs);
  const twice = Object.values(counts).filter((c) => c > 1).length;
  const missing = n - Object.keys(counts).length;
  await sleep(5000);
  const after = memory(stack.server.pid());
  const afterHeap = await heap();

  console.log(`\n${n} invocations sleeping ${sleepMs} ms, ${args.store} store`);
  console.log(
    `  sent in ${Math.round(sentAfter)} ms (${Math.round((n / sentAfter) * 1000)}/s), all suspended after ${Math.round(allSuspendedAfter)} ms`,
  );
  console.log(
    `  server RSS idle ${mib(idle.anonKiB + idle.fileKiB)} MiB (anon ${mib(idle.anonKiB)}, file ${mib(idle.fileKiB)}); with all suspended ${mib(loaded.anonKiB + loaded.fileKiB)} MiB (anon ${mib(loaded.anonKiB)}, file ${mib(loaded.fileKiB)})`,
  );
  console.log(`  with all suspended: ${loadedHeap}`);
  console.log(
    `  per suspended invocation: ${((loaded.anonKiB - idle.anonKiB) / n).toFixed(2)} KiB anonymous, ${((loaded.anonKiB + loaded.fileKiB - idle.anonKiB - idle.fileKiB) / n).toFixed(2)} KiB with mapped files`,
  );
  console.log(
    `  SIGKILL while they sleep -> healthy after ${Math.round(healthyAfter)} ms (RSS ${mib(restarted.anonKiB + restarted.fileKiB)} MiB); all completed ${Math.round(doneAfterRestart)} ms after the kill, ${Math.round(lateness)} ms after the last one was due`,
  );
  console.log(
    `  completed once: ${n - missing - twice}, twice or more: ${twice}, missing: ${missing}; RSS 5 s after all completed ${mib(after.anonKiB + after.fileKiB)} MiB (anon ${mib(after.anonKiB)}, file ${mib(after.fileKiB)}), ${afterHeap}`,
  );
  if (twice || missing) process.exitCode = 1;
} finally {
  await stack.stop();
}
