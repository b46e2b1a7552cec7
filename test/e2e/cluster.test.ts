/**
 * Several nodes over one redis-server (issue 13, design.md "Scaling past one machine"): any
 * node's ingress serves any request, partitions are spread and move when a node dies or is
 * paused past its lease, and through all of it every acknowledged invocation completes
 * exactly once per key and exclusive handlers of a key never overlap.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startRedis } from '../support/redis.js';
import { startRedstate } from '../support/server.js';
import { startCluster, type ClusterNodeHandle, type ClusterStack } from '../support/cluster.js';
import { scrape } from '../support/prometheus.js';
import { waitFor } from '../support/wait.js';

const KEYS = Array.from({ length: 50 }, (_, i) => `k${i}`);

/** Loads run while this holds; a failed test clears it so that its load ends with it. */
let loadRunning = true;

/** Why the last send was not acknowledged, for failure messages. */
let lastRefusal = '';

/** Sends one add to `key` through a random node; the invocation id once acknowledged, else undefined. */
async function sendAdd(stack: ClusterStack, key: string, live?: ClusterNodeHandle[]): Promise<string | undefined> {
  const res = await stack
    .any(live)
    .ingress.post(`restate/send/Counter/${key}/add`, { json: { delta: 1, pauseMs: 5 } })
    .catch((err: Error) => {
      lastRefusal = err.message;
      return undefined;
    });
  if (res?.statusCode === 202) return (JSON.parse(res.body) as { invocationId: string }).invocationId;
  if (res) lastRefusal = `${res.statusCode} ${res.body}`;
  return undefined;
}

/**
 * Adds to every key, round after round, each through a random node of `via(round)`, until
 * `stop` (or a failed test clears `loadRunning`): what was acknowledged per key, and how many
 * sends per key were not.
 */
function addLoad(stack: ClusterStack, via: (round: number) => ClusterNodeHandle[]) {
  const acked = new Map<string, string[]>(KEYS.map((k) => [k, []]));
  const unknown = new Map<string, number>(KEYS.map((k) => [k, 0]));
  let rounds = 0;
  loadRunning = true;
  const running = (async () => {
    while (loadRunning) {
      await Promise.all(
        KEYS.map(async (key) => {
          const id = await sendAdd(stack, key, via(rounds));
          if (id) acked.get(key)!.push(id);
          else unknown.set(key, unknown.get(key)! + 1);
        }),
      );
      rounds++;
    }
  })();
  return {
    acked,
    unknown,
    rounds: () => rounds,
    stop: async () => {
      loadRunning = false;
      await running;
    },
  };
}

/** Every acknowledged add completed (attached through random live nodes), each key counts what was acknowledged (plus at most the unknown), no overlaps, no key stuck. */
async function checkAdds(t: import('ava').ExecutionContext, stack: ClusterStack, acked: Map<string, string[]>, unknown: Map<string, number>, live: ClusterNodeHandle[]) {
  for (const key of KEYS) {
    const ids = acked.get(key)!;
    const done = await Promise.all(ids.map((id) => stack.any(live).ingress.get(`restate/attach/${id}`)));
    t.deepEqual(
      done.map((r) => r.statusCode),
      ids.map(() => 200),
      key,
    );
    const after = await stack.any(live).ingress.post(`restate/call/Counter/${key}/add`, { json: { delta: 0 } });
    t.is(after.statusCode, 200, `${key} stays locked`);
    const count = Number(after.body);
    const extra = unknown.get(key) ?? 0;
    t.true(count >= ids.length && count <= ids.length + extra, `${key}: count ${count}, acknowledged ${ids.length}, unknown ${extra}`);
  }
  const c = await stack.counts();
  for (const key of KEYS) t.is(c[`overlaps:${key}`], undefined, `two exclusive handlers of ${key} ran at once`);
}

test.serial('3 nodes: partitions spread evenly; calls and sends through every ingress; 50 keys added through random nodes: exact counts, no overlap', async (t) => {
  const stack = await startCluster(3);
  try {
    const rows = await stack.partitions(stack.nodes[2]!);
    const per = new Map<string, number>();
    for (const r of rows) per.set(r.node_id!, (per.get(r.node_id!) ?? 0) + 1);
    t.deepEqual([...per.values()].sort(), [8, 8, 8]);
    const health = JSON.parse((await stack.nodes[1]!.admin.get('cluster-health')).body) as { nodes: Array<{ node_id: string; partitions: number[] }> };
    t.deepEqual(health.nodes.map((n) => n.node_id), ['node-0', 'node-1', 'node-2']);

    // Sends and calls spread over the three ingress ports, attach through others.
    const acked = new Map<string, string[]>(KEYS.map((k) => [k, []]));
    const ROUNDS = 4;
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        KEYS.map(async (key) => {
          const id = await sendAdd(stack, key);
          t.truthy(id, `send to ${key} refused: ${lastRefusal}`);
          acked.get(key)!.push(id!);
        }),
      );
    }
    // Unkeyed calls (created where they arrive) and idempotent ones (forwarded to the key's owner).
    const once = await Promise.all(
      Array.from({ length: 30 }, (_, i) => stack.nodes[i % 3]!.ingress.post('restate/call/Once/run', { json: { tag: `u${i}` }, headers: i % 2 ? { 'idempotency-key': `ik${i}` } : {} })),
    );
    t.deepEqual(once.map((r) => r.body), Array.from({ length: 30 }, (_, i) => `"u${i}:1"`));
    await checkAdds(t, stack, acked, new Map(), stack.nodes);
    // Exactly what was sent: the next call through any node sees every add.
    const calls = await Promise.all(KEYS.map((key) => stack.any().ingress.post(`restate/call/Counter/${key}/add`, { json: { delta: 1 } })));
    t.deepEqual(calls.map((r) => r.body), KEYS.map(() => String(ROUNDS + 1)));
    const c = await stack.counts();
    for (const key of KEYS) t.is(c[`adds:${key}`], ROUNDS + 2, key);
  } finally {
    await stack.stop();
  }
});

test.serial('3 nodes: calls from handlers to partitions of other nodes, awakeables resolved and invocations killed through any node', async (t) => {
  const stack = await startCluster(3);
  try {
    const tags = Array.from({ length: 12 }, (_, i) => `x${i}`);
    // Idempotent calls and workflow runs from handlers: callee and caller often live on other nodes.
    const idem = await Promise.all(tags.map((tag) => stack.any().ingress.post('restate/call/Caller/idemTwice', { json: tag })));
    t.deepEqual(idem.map((r) => JSON.parse(r.body) as unknown), tags.map((tag) => [`${tag}:1`, `${tag}:1`]));
    const wf = await Promise.all(tags.map((tag) => stack.any().ingress.post('restate/call/Caller/wfTwice', { json: `wf-${tag}` })));
    t.deepEqual(wf.map((r) => JSON.parse(r.body) as unknown), tags.map((tag) => [`wf wf-${tag} 1`, '409 the workflow method was already invoked']));

    // Awakeables: waiting on one node, resolved through every node, attached through another.
    const waits = await Promise.all(tags.map((tag, i) => stack.nodes[i % 3]!.ingress.post('restate/send/Signals/wait', { json: { tag } })));
    const ids = waits.map((r) => (JSON.parse(r.body) as { invocationId: string }).invocationId);
    let published: Record<string, number> = {};
    await waitFor(async () => {
      published = await stack.counts();
      return tags.every((tag) => Object.keys(published).some((k) => k.startsWith(`awk:${tag}=`)));
    }, 20_000);
    await Promise.all(
      tags.map(async (tag, i) => {
        const awk = Object.keys(published).find((k) => k.startsWith(`awk:${tag}=`))!.slice(`awk:${tag}=`.length);
        const res = await stack.nodes[(i + 1) % 3]!.ingress.post(`restate/awakeables/${awk}/resolve`, { json: tag });
        t.is(res.statusCode, 202);
      }),
    );
    const results = await Promise.all(ids.map((id, i) => stack.nodes[(i + 2) % 3]!.ingress.get(`restate/attach/${id}`)));
    t.deepEqual(results.map((r) => r.body), tags.map((tag) => JSON.stringify({ resolvedWith: tag })));

    // An admin kill through a node that does not own the invocation.
    const waiting = await Promise.all(tags.map((tag) => stack.any().ingress.post('restate/send/Signals/wait', { json: { tag: `k-${tag}` } })));
    const killIds = waiting.map((r) => (JSON.parse(r.body) as { invocationId: string }).invocationId);
    const killed = await Promise.all(killIds.map((id) => stack.any().admin.patch(`invocations/${id}/kill`)));
    t.deepEqual(killed.map((r) => r.statusCode), killIds.map(() => 200));
    const after = await Promise.all(killIds.map((id) => stack.any().ingress.get(`restate/attach/${id}`)));
    t.deepEqual(after.map((r) => r.statusCode), killIds.map(() => 409));
  } finally {
    await stack.stop();
  }
});

test.serial('failover: SIGKILL of one node under load: its partitions are owned by the others within the lease bound, every acknowledged add completes, no key stuck', async (t) => {
  const stack = await startCluster(3);
  try {
    const victim = stack.nodes[2]!;
    const live = stack.nodes.slice(0, 2);
    const load = addLoad(stack, (round) => (round < 3 ? stack.nodes : live));
    await waitFor(async () => load.rounds() >= 3, 60_000);
    await victim.server.kill();
    const killedAt = Date.now();
    await waitFor(async () => {
      const rows = await stack.partitions(live[0]!);
      return rows.every((r) => r.node_id === 'node-0' || r.node_id === 'node-1');
    }, 20_000);
    const failoverMs = Date.now() - killedAt;
    t.log(`failover: every partition of the killed node owned by the others after ${failoverMs} ms`);
    t.true(failoverMs <= 6_500, `failover took ${failoverMs} ms`);
    const until = load.rounds() + 3;
    await waitFor(async () => load.rounds() >= until, 60_000);
    await load.stop();
    await checkAdds(t, stack, load.acked, load.unknown, live);
  } finally {
    loadRunning = false;
    await stack.stop();
  }
});

test.serial('SIGTERM of a node under load hands its partitions over without waiting for the leases to run out', async (t) => {
  const stack = await startCluster(2);
  try {
    const leaving = stack.nodes[1]!;
    const staying = [stack.nodes[0]!];
    const load = addLoad(stack, () => staying);
    await waitFor(async () => load.rounds() >= 2, 60_000);
    const started = Date.now();
    t.is(await leaving.server.terminate(), 0);
    const stoppedMs = Date.now() - started;
    const rows = await stack.partitions(staying[0]!);
    t.deepEqual(rows.filter((r) => r.node_id === 'node-1'), [], 'released, not left to run out');
    await waitFor(async () => (await stack.partitions(staying[0]!)).every((r) => r.node_id === 'node-0'), 2_000);
    t.log(`SIGTERM to every partition owned by the other node: ${Date.now() - started} ms (the stop itself ${stoppedMs} ms)`);
    const until = load.rounds() + 2;
    await waitFor(async () => load.rounds() >= until, 60_000);
    await load.stop();
    await checkAdds(t, stack, load.acked, load.unknown, staying);
    t.deepEqual([...load.unknown.values()].filter((n) => n > 0), [], `no send through the staying node was refused: ${lastRefusal}`);
  } finally {
    loadRunning = false;
    await stack.stop();
  }
});

test.serial('a node paused past its lease (SIGSTOP) is fenced off: its partitions move, it stops their work when it wakes, and it rejoins cleanly', async (t) => {
  const stack = await startCluster(2);
  try {
    const zombie = stack.nodes[1]!;
    const acked = new Map<string, string[]>(KEYS.map((k) => [k, []]));
    for (let round = 0; round < 2; round++) {
      await Promise.all(KEYS.map(async (key) => acked.get(key)!.push((await sendAdd(stack, key))!)));
    }
    zombie.server.signal('SIGSTOP');
    await waitFor(async () => (await stack.partitions(stack.nodes[0]!)).every((r) => r.node_id === 'node-0'), 20_000);
    // Work while the zombie sleeps: all of it on node-0 now.
    await Promise.all(KEYS.map(async (key) => acked.get(key)!.push((await sendAdd(stack, key, [stack.nodes[0]!]))!)));
    zombie.server.signal('SIGCONT');
    await waitFor(async () => /lost partition \d+: its lease was not renewed|lost partition \d+: another node acquired it/.test(zombie.server.output()), 10_000);
    // It rejoins: the partitions are spread over both nodes again.
    await waitFor(async () => {
      const rows = await stack.partitions(stack.nodes[0]!);
      return rows.filter((r) => r.node_id === 'node-1').length === 12;
    }, 20_000);
    const fenced = (await scrape(`${zombie.server.node}/metrics`)).scrape;
    const refused = (where: string) => (fenced.labelSets('redstate_fenced_commits_total').some((l) => l['where'] === where) ? fenced.value('redstate_fenced_commits_total', { where }) : 0);
    t.log(`the zombie's commits refused after it woke: ${refused('node')} by its own lease check, ${refused('store')} by the store's epoch check`);
    for (let round = 0; round < 2; round++) {
      await Promise.all(KEYS.map(async (key) => acked.get(key)!.push((await sendAdd(stack, key))!)));
    }
    await checkAdds(t, stack, acked, new Map(), stack.nodes);
    // The state counts every add exactly once (checkAdds). The 'exit' step of an add may run
    // twice: once for the zombie, whose result was never stored, and again on the new owner.
    const c = await stack.counts();
    for (const key of KEYS) t.true(c[`adds:${key}`]! >= acked.get(key)!.length + 1, key);
  } finally {
    resumeAll(stack);
    await stack.stop();
  }
});

/** A test that failed while the node was stopped must not leave it stopped: SIGTERM would wait forever. */
function resumeAll(stack: ClusterStack): void {
  for (const n of stack.nodes) n.server.signal('SIGCONT');
}

test('one process per data dir, and the partition count stays what the store was created with', async (t) => {
  const redis = await startRedis();
  const first = await startRedstate({ redisUrl: redis.url, env: { REDSTATE_PARTITIONS: '8' } });
  try {
    const again = await runToExit({ REDSTATE_REDIS_URL: redis.url, REDSTATE_DATA_DIR: first.dataDir, REDSTATE_INGRESS_PORT: '0', REDSTATE_ADMIN_PORT: '0', REDSTATE_NODE_PORT: '0' });
    t.not(again.code, 0);
    t.regex(again.output, /the data dir .* is in use by another redstate process \(pid \d+\)/);
    const other = await runToExit({ REDSTATE_REDIS_URL: redis.url, REDSTATE_DATA_DIR: await mkdtemp(path.join(tmpdir(), 'redstate-data-')), REDSTATE_PARTITIONS: '24', REDSTATE_INGRESS_PORT: '0', REDSTATE_ADMIN_PORT: '0', REDSTATE_NODE_PORT: '0' });
    t.not(other.code, 0);
    t.regex(other.output, /this store was created with 8 partitions; REDSTATE_PARTITIONS=24 cannot change that/);
  } finally {
    await first.stop();
    await redis.stop();
  }
});

async function runToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [path.resolve('dist/src/main.js')], { env: { ...process.env, REDSTATE_HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}
