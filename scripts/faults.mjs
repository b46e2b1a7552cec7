#!/usr/bin/env node
// The fault campaign of issue 9 (test/support/faults/): rounds of load (calls, sends, idempotent
// sends, read-modify-write adds on 20 keys) with SIGKILLs of redstate, redis-server or the SDK
// service at seeded moments, then the checks. The client retries every 503 (issue 31): counts
// must stay exact, no answer may leave the outcome unknown, no request may go unanswered for
// 30 s, and every invocation must finish
// within 60 s of the last fault; the table gives the 503s and the time to resume after a kill. Prints a table per store and fault kind and the
// evidence of every violation; exits 1 on any violation.
//
//   npm run faults                                   # every store and fault kind, the long rounds
//   npm run faults -- --store redis --fault redis --rounds 12
//   npm run faults -- --store redis-cluster --fault redis   # three masters; a fault kills one
//   npm run faults -- --store redis-sentinel --fault redis  # primary + replica + 3 Sentinels; a fault kills the primary
//   npm run faults -- --store redis-workers --fault server,redis   # one server with two workers (--workers 2); a server fault kills the primary
//   npm run faults -- --store embedded-workers --fault server,sdk  # two workers sharing the embedded store's files
//   npm run faults -- --ops 500 --faults-per-round 3 --seed 7 --concurrency 48 --settle-ms 60000
//   npm run faults -- --fault redis --downtime-ms 500-1500   # how long a killed process stays down
//
// A killed process stays down 0 ms (redstate), 0-2000 ms drawn per fault (redis-server) or 3 s
// (SDK service) unless --downtime-ms says otherwise. Rounds default to 5 per kind, 10 for Redis kills; round r runs with seed + r - 1, so a failed
// round runs again alone with `--rounds 1 --seed <its seed>`. A failed round's server log,
// executions file and evidence are kept below --artifacts (default: a new temp dir).
// --no-build skips the build (tsc) that runs first.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(ROOT);

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'embedded,redis' },
    fault: { type: 'string', default: 'server,sdk,redis' },
    rounds: { type: 'string' },
    ops: { type: 'string' },
    concurrency: { type: 'string' },
    'faults-per-round': { type: 'string' },
    seed: { type: 'string' },
    'settle-ms': { type: 'string' },
    'downtime-ms': { type: 'string' },
    artifacts: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
  },
});

if (!args['no-build'])
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
const { runCampaign } = await import('../dist/test/support/faults/campaign.js');
const { evidence, summary, table } = await import('../dist/test/support/faults/report.js');
const { downtime, faultKinds, longDefaults, longRounds } = await import('../dist/test/support/faults/options.js');

const list = (s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const number = (name, fallback) => {
  if (args[name] === undefined) return fallback;
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, not '${args[name]}'`);
  return n;
};
/** `N` or `MIN-MAX`. */
const range = (name, fallback) => {
  if (args[name] === undefined) return fallback;
  const m = /^(\d+)(?:-(\d+))?$/.exec(args[name]);
  if (!m) throw new Error(`--${name} must be N or MIN-MAX (ms), not '${args[name]}'`);
  return [Number(m[1]), Number(m[2] ?? m[1])];
};
const stores = list(args.store);
const faults = list(args.fault);
for (const s of stores)
  if (!['embedded', 'redis', 'redis-cluster', 'redis-sentinel', 'redis-workers', 'embedded-workers'].includes(s))
    throw new Error(`unknown store '${s}'`);
for (const f of faults) if (!faultKinds.includes(f)) throw new Error(`unknown fault '${f}'`);
const artifactsDir = args.artifacts ?? mkdtempSync(path.join(os.tmpdir(), 'redstate-faults-evidence-'));

const results = [];
for (const store of stores) {
  for (const fault of faults) {
    // redis-server is only there with the Redis stores.
    if (fault === 'redis' && store.startsWith('embedded')) continue;
    const opts = {
      store,
      fault,
      rounds: number('rounds', longRounds[fault]),
      ops: number('ops', longDefaults.ops),
      concurrency: number('concurrency', longDefaults.concurrency),
      faultsPerRound: number('faults-per-round', longDefaults.faultsPerRound),
      seed: number('seed', longDefaults.seed),
      settleMs: number('settle-ms', longDefaults.settleMs),
      downtimeMs: range('downtime-ms', downtime[fault]),
      artifactsDir,
    };
    results.push(...(await runCampaign(opts, (r) => console.log(summary(r)))));
  }
}

console.log(`\n${table(results)}\n`);
const failed = results.filter((r) => r.violations.length > 0);
for (const r of failed) console.log(`${evidence(r)}\n`);
if (failed.length > 0) console.log(`evidence of the failed rounds: ${artifactsDir}`);
process.exitCode = failed.length > 0 ? 1 : 0;
