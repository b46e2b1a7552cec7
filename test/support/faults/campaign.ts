/**
 * A fault campaign: rounds of load against a fresh stack (redstate, its store, the SDK service
 * of test/support/services/faults.mjs), with faults at seeded moments, then the checks. Used by
 * test/e2e/faults.test.ts (short) and scripts/faults.mjs (long).
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startStack } from '../stack.js';
import { check, type Violation } from './checks.js';
import { readExecutions } from './executions.js';
import { faultInjector, type Fault } from './injector.js';
import { runLoad, type Sent } from './load.js';
import { downtime, type CampaignOptions } from './options.js';
import { planFaults, planLoad } from './plan.js';
import { prng } from './prng.js';
import { evidence, type RoundResult } from './report.js';
import { settle } from './settle.js';

export async function runCampaign(
  opts: CampaignOptions,
  onRound: (r: RoundResult) => void = () => {},
): Promise<RoundResult[]> {
  const results: RoundResult[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const result = await runRound(opts, round);
    onRound(result);
    results.push(result);
  }
  return results;
}

export async function runRound(opts: CampaignOptions, round: number): Promise<RoundResult> {
  const seed = opts.seed + round - 1;
  const started = Date.now();
  const dir = await mkdtemp(path.join(tmpdir(), 'redstate-faults-'));
  const executionsFile = path.join(dir, 'executions.ndjson');
  const stack = await startStack(opts.store, {
    serviceFile: 'faults.mjs',
    serviceEnv: { FAULTS_EXECUTIONS: executionsFile },
  }).catch(async (err: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  const result: RoundResult = {
    store: opts.store,
    fault: opts.fault,
    round,
    seed,
    ops: opts.ops,
    acked: 0,
    unacknowledged: {},
    unavailable: 0,
    ambiguous: 0,
    resumeMs: [],
    faults: [],
    violations: [],
    durationMs: 0,
    serverLog: '',
  };
  try {
    const rng = prng(seed);
    const plan = planLoad(rng, opts.ops);
    const injector = faultInjector(
      stack,
      opts.fault,
      planFaults(rng, opts.ops, opts.faultsPerRound, opts.downtimeMs ?? downtime[opts.fault]),
    );
    const sent = await runLoad(stack.ingress, plan, opts.concurrency, (op) => injector.onStart(op));
    result.acked = sent.filter((s) => s.acked).length;
    for (const s of sent) {
      if (s.acked) continue;
      // The error code, or the status, and the operation's kind: the kinds, not each body.
      const kind = `${(s.error ?? 'unknown').split(' ')[0]!} (${s.op.kind})`;
      result.unacknowledged[kind] = (result.unacknowledged[kind] ?? 0) + 1;
    }
    result.unavailable = sent.reduce((n, s) => n + s.unavailable, 0);
    result.ambiguous = sent.reduce((n, s) => n + s.ambiguous, 0);
    result.faults = await injector.done();
    result.resumeMs = result.faults.map((f) => resumedAfter(f, sent));
    const lastFault = Math.max(started, ...result.faults.map((f) => f.restartedAt));
    const observed = await settle(
      stack,
      sent,
      await readExecutions(executionsFile),
      opts.settleMs,
      lastFault + FINISH_WITHIN_MS,
    );
    // From each kill until the killed process is back and the first answer after the kill came:
    // the service was away (an SDK kill leaves other requests answered while its own wait).
    const outages = result.faults.map((f, i): [number, number] => [
      f.killedAt,
      Math.max(f.restartedAt, f.killedAt + (Number.isNaN(result.resumeMs[i]) ? 0 : result.resumeMs[i]!)),
    ]);
    result.violations = [
      ...check(sent, await readExecutions(executionsFile), observed, outages),
      ...unstructuredLog(stack.server.output()),
    ];
  } catch (err) {
    result.violations.push(roundError(err, stack.server.output()));
  } finally {
    result.serverLog = stack.server.output();
    result.durationMs = Date.now() - started;
    if (result.violations.length > 0 && opts.artifactsDir) await keep(result, executionsFile, opts.artifactsDir);
    // SIGKILL first: the checks are done, and a graceful stop must not hold up the campaign.
    await stack.server.kill();
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return result;
}

/** Every invocation the server created, acknowledged or not, completes within this long after the last fault. */
const FINISH_WITHIN_MS = 60_000;

/** From a kill to the first answer to an operation sent after it: how long the service was away (NaN: none was). */
function resumedAfter(fault: Fault, sent: Sent[]): number {
  const after = sent.filter((s) => s.acked && s.sentAt >= fault.killedAt).map((s) => s.answeredAt - fault.killedAt);
  return after.length > 0 ? Math.min(...after) : NaN;
}

/** The server's log stays one JSON object per line through the faults (a log shipper reads it so). */
function unstructuredLog(output: string): Violation[] {
  // Lines of `--- …` are the test harness's own markers (a restart).
  const lines = output.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{') && !l.startsWith('--- '));
  if (lines.length === 0) return [];
  return [
    {
      kind: 'error',
      subject: 'log',
      detail: `lines that are no JSON object:\n${lines.slice(0, 5).join('\n')}`,
      ids: [],
    },
  ];
}

/** A round that could not run to its checks: why, and how the server's log ends (did it stop?). */
function roundError(err: unknown, serverLog: string): Violation {
  const why = err instanceof Error ? (err.stack ?? err.message) : String(err);
  const tail = serverLog.trimEnd().split('\n').slice(-5).join('\n');
  return { kind: 'error', subject: 'round', detail: `${why}\nthe server log ends with:\n${tail}`, ids: [] };
}

/** Copies what a failed round leaves for a closer look: the server log, the executions file, the evidence. */
async function keep(r: RoundResult, executionsFile: string, root: string): Promise<void> {
  const dir = path.join(root, `${r.store}-${r.fault}-round${r.round}-seed${r.seed}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'server.log'), r.serverLog);
  // There is no executions file if no step ran at all.
  await copyFile(executionsFile, path.join(dir, 'executions.ndjson')).catch(() => {});
  r.artifacts = dir;
  await writeFile(path.join(dir, 'evidence.md'), evidence(r, Infinity));
}
