/**
 * `--workers 2` (src/workers.ts) on Redis and on the embedded store's shared files: two
 * processes behind the same ingress and admin ports, each owning half the partitions. Adds
 * with idempotency keys on ten objects, through SIGKILLs of the primary (its workers go with
 * it), of one worker (the primary starts it again) and, on Redis, of redis-server: every add is
 * applied exactly once (each key's answers are 1..n, none twice, none missing), and no key
 * stays locked (one more add on each answers at once).
 */
import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import got from 'got';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { sqlRows, startStack, type Stack, type StoreKind } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const KINDS: StoreKind[] = ['redis-workers', 'embedded-workers'];

const KEYS = 10;
/**
 * Adds per burst: enough that each kill lands while many are in flight. Each key takes its
 * creations one commit at a time, and on a loaded machine (six other test stacks) a Redis
 * commit took 300-700 ms: 1,500 adds a burst then took minutes to answer, though no key was
 * ever left locked.
 */
const BURST = 500;

interface ClusterHealth {
  nodes: Array<{ node_id: string; partitions: number[] }>;
}

/** Every worker owns some of the partitions, and together all of them. */
async function sharedByTwo(stack: Stack): Promise<boolean> {
  const res = await stack.admin.get('cluster-health');
  if (res.statusCode !== 200) return false;
  const { nodes } = JSON.parse(res.body) as ClusterHealth;
  const owned = nodes.map((n) => n.partitions.length);
  return nodes.length === 2 && owned.every((n) => n > 0) && owned.reduce((a, b) => a + b, 0) === 24;
}

/** The worker processes: the primary's children. */
function workerPids(primary: number): number[] {
  const out = execFileSync('pgrep', ['-P', String(primary)], { encoding: 'utf8' });
  return out.split('\n').filter(Boolean).map(Number);
}

/** Long past every restart here, even on a loaded machine: an add still unanswered then waits on a key left locked. */
const ANSWER_WITHIN_MS = 90_000;

/**
 * One add per op, retried with its idempotency key until it is answered: an add whose answer
 * was lost to a kill is answered from the store when asked again, never applied twice.
 */
async function addUntilAnswered(stack: Stack, op: number): Promise<{ key: number; value: number; tries: number }> {
  const key = op % KEYS;
  const started = Date.now();
  const deadline = started + ANSWER_WITHIN_MS;
  // Each try's start (ms into the op) and how it ended: what a failure shows.
  const history: string[] = [];
  let last = '';
  for (let tries = 1; Date.now() < deadline; tries++) {
    if (last) history.push(last);
    last = `+${Date.now() - started} ms: `;
    try {
      const res = await stack.ingress.post(`restate/call/Counter/w${key}/add`, {
        json: 1,
        headers: { 'idempotency-key': `op-${op}` },
        timeout: { request: 20_000 },
      });
      if (res.statusCode === 200) return { key, value: Number(res.body), tries };
      last += `${res.statusCode} ${res.body}`;
    } catch (err) {
      // The connection went with a killed process: ask again.
      last += String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  history.push(last);
  throw new Error(
    `add ${op} on w${key} unanswered for ${ANSWER_WITHIN_MS / 1000} s (started ${new Date(started).toISOString()}):\n${history.join('\n')}`,
  );
}

for (const kind of KINDS)
  test.serial(
    `${kind}: two workers share the partitions and the ports; kills of either lose nothing and do nothing twice`,
    async (t) => {
      const stack = await startStack(kind, { serviceFile: 'basic.mjs' });
      try {
        await waitFor(() => sharedByTwo(stack), 20_000, 200);
        const ops: Array<Promise<{ key: number; value: number; tries: number }>> = [];
        let next = 0;
        const burst = (n: number) => {
          for (let i = 0; i < n; i++) ops.push(addUntilAnswered(stack, next++));
        };

        // The primary killed mid-burst: its workers exit with it; a new primary starts at once.
        burst(BURST);
        await new Promise((r) => setTimeout(r, 100));
        const before = workerPids(stack.server.pid());
        await stack.server.crashAndRestart();
        await waitFor(async () => before.every((pid) => !isAlive(pid)), 10_000);

        // One worker killed mid-burst: the primary starts it again; the other serves meanwhile.
        burst(BURST);
        await new Promise((r) => setTimeout(r, 100));
        const [victim] = workerPids(stack.server.pid());
        process.kill(victim!, 'SIGKILL');
        await waitFor(async () => workerPids(stack.server.pid()).length === 2 && !isAlive(victim!), 10_000);
        await waitFor(() => sharedByTwo(stack), 20_000, 200);

        // redis-server killed mid-burst and started again on its AOF.
        if (stack.redis) {
          burst(BURST);
          await new Promise((r) => setTimeout(r, 100));
          await stack.redis.restart({ kill: true });
        }

        const answers = await Promise.all(ops).catch(async (err: unknown) => {
          await logWhatWaits(t, stack, kind, err);
          throw err;
        });
        for (let key = 0; key < KEYS; key++) {
          const values = answers
            .filter((a) => a.key === key)
            .map((a) => a.value)
            .sort((a, b) => a - b);
          t.deepEqual(
            values,
            values.map((_, i) => i + 1),
            `key ${key}: each add applied once`,
          );
          // Not locked: one more add answers at once with the next value.
          const res = await stack.ingress.post(`restate/call/Counter/w${key}/add`, { json: 1 });
          t.is(res.statusCode, 200, res.body);
          t.is(Number(res.body), values.length + 1);
        }
        const retried = answers.filter((a) => a.tries > 1).length;
        t.log(`${answers.length} adds through the kills, each applied once; ${retried} asked again after a kill`);
        t.true(retried > 0, 'the kills landed while adds were in flight');
        t.regex(stack.server.output(), /worker \d exited \(SIGKILL\), starting it again/);
      } finally {
        await stack.stop();
      }
    },
  );

/**
 * After an add went unanswered: what still waits in the store, the add itself, who holds each
 * key, each worker's gauges, and the server's output (written to test-output/), to tell a key
 * left locked from a lost wait or a lost connection.
 */
async function logWhatWaits(t: ExecutionContext, stack: Stack, kind: StoreKind, err: unknown): Promise<void> {
  const open = await sqlRows(
    stack.admin,
    "SELECT target, status, count(*) AS n, min(idempotency_key) AS first FROM sys_invocation WHERE status <> 'completed' GROUP BY target, status",
  ).catch((e: unknown) => String(e));
  t.log('not completed:', JSON.stringify(open));
  const failed = /add (\d+) on/.exec(String(err))?.[1];
  const op = await sqlRows(
    stack.admin,
    `SELECT id, status, created_at, modified_at, completion_result FROM sys_invocation WHERE idempotency_key = 'op-${failed}'`,
  ).catch((e: unknown) => String(e));
  t.log(`op ${failed} now:`, JSON.stringify(op));
  const holders = await sqlRows(
    stack.admin,
    'SELECT k.service_key, k.invocation_id, i.status FROM sys_keyed_service_status k LEFT JOIN sys_invocation i ON i.id = k.invocation_id',
  ).catch((e: unknown) => String(e));
  t.log('keys held by:', JSON.stringify(holders));
  t.log(await workerGauges(stack.server.output()));
  const file = join(projectRoot(), 'test-output', `workers-${kind}.log`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, stack.server.output());
  t.log(`the server's output: ${file}; its end:\n${stack.server.output().slice(-3000)}`);
}

/** Each live worker's gauges of what waits in it (its node port serves /metrics). */
async function workerGauges(output: string): Promise<string> {
  const ports = new Map<string, string>();
  for (const m of output.matchAll(/worker (\d+) serving, its node port :(\d+)/g)) ports.set(m[1]!, m[2]!);
  const lines: string[] = [];
  for (const [worker, port] of ports) {
    const text = await got(`http://127.0.0.1:${port}/metrics`, { timeout: { request: 5000 } })
      .text()
      .catch(String);
    const gauges = text
      .split('\n')
      .filter((l) =>
        /^(redstate_attempts_waiting_to_start|redstate_actors_in_memory|redstate_partitions_owned|redstate_timers_armed)/.test(
          l,
        ),
      );
    lines.push(`worker ${worker} (:${port}): ${gauges.join('; ') || text.slice(0, 200)}`);
  }
  return lines.join('\n');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

for (const kind of KINDS)
  test.serial(`${kind}: calls that wait while their partition moves between workers are answered`, async (t) => {
    // Started and used at once: the first worker up takes every partition and hands half of them
    // to the second within a round, while these calls wait (each attach about a second). A wait
    // set up as its partition left was never answered (neither here nor by the next owner).
    const stack = await startStack(kind, { serviceFile: 'context.mjs' });
    try {
      const call = (path: string, json: unknown) =>
        stack.ingress.post(`restate/${path}`, { json, timeout: { request: 20_000 } });
      const answers = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          await new Promise((r) => setTimeout(r, i * 20));
          const sent = await call('send/Callee/slow', { tag: `moving-${i}`, sleepMs: 1000 });
          const id = (JSON.parse(sent.body) as { invocationId: string }).invocationId;
          const attached = await call('call/Attacher/attach', id);
          return `${attached.statusCode} ${attached.body}`;
        }),
      );
      t.deepEqual(
        answers,
        answers.map((_, i) => `200 {"value":"slow moving-${i}"}`),
      );
    } finally {
      await stack.stop();
    }
  });
