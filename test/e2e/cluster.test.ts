/**
 * Several nodes over one redis-server (issue 13, design.md "Scaling past one machine"): any
 * node's ingress serves any request, partitions are spread and move when a node dies or is
 * paused past its lease, and through all of it every acknowledged invocation completes
 * exactly once per key and exclusive handlers of a key never overlap.
 * The spread and failover tests (support/cluster-scenarios.ts) also run over a Redis Cluster:
 * cluster-redis-cluster.test.ts.
 */
import test from 'ava';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startRedis } from '../support/redis.js';
import { runToExit, startRedstate } from '../support/server.js';
import { startCluster, type ClusterStack } from '../support/cluster.js';
import { addLoad, checkAdds, endLoads, KEYS, lastRefusal, sendAdd } from '../support/cluster-load.js';
import { failoverUnderLoad, onThreeNodes, spreadAndAdds } from '../support/cluster-scenarios.js';
import { scrape } from '../support/prometheus.js';
import { waitFor } from '../support/wait.js';

test.serial(
  '3 nodes: partitions spread evenly; calls and sends through every ingress; 50 keys added through random nodes: exact counts, no overlap',
  onThreeNodes(spreadAndAdds),
);

test.serial(
  '3 nodes: calls from handlers to partitions of other nodes, awakeables resolved and invocations killed through any node',
  async (t) => {
    const stack = await startCluster(3);
    try {
      const tags = Array.from({ length: 12 }, (_, i) => `x${i}`);
      // Idempotent calls and workflow runs from handlers: callee and caller often live on other nodes.
      const idem = await Promise.all(
        tags.map((tag) => stack.any().ingress.post('restate/call/Caller/idemTwice', { json: tag })),
      );
      t.deepEqual(
        idem.map((r) => JSON.parse(r.body) as unknown),
        tags.map((tag) => [`${tag}:1`, `${tag}:1`]),
      );
      const wf = await Promise.all(
        tags.map((tag) => stack.any().ingress.post('restate/call/Caller/wfTwice', { json: `wf-${tag}` })),
      );
      t.deepEqual(
        wf.map((r) => JSON.parse(r.body) as unknown),
        tags.map((tag) => [`wf wf-${tag} 1`, '409 the workflow method was already invoked']),
      );

      // Awakeables: waiting on one node, resolved through every node, attached through another.
      const waits = await Promise.all(
        tags.map((tag, i) => stack.nodes[i % 3]!.ingress.post('restate/send/Signals/wait', { json: { tag } })),
      );
      const ids = waits.map((r) => (JSON.parse(r.body) as { invocationId: string }).invocationId);
      let published: Record<string, number> = {};
      await waitFor(async () => {
        published = await stack.counts();
        return tags.every((tag) => Object.keys(published).some((k) => k.startsWith(`awk:${tag}=`)));
      }, 20_000);
      await Promise.all(
        tags.map(async (tag, i) => {
          const awk = Object.keys(published)
            .find((k) => k.startsWith(`awk:${tag}=`))!
            .slice(`awk:${tag}=`.length);
          const res = await stack.nodes[(i + 1) % 3]!.ingress.post(`restate/awakeables/${awk}/resolve`, { json: tag });
          t.is(res.statusCode, 202);
        }),
      );
      const results = await Promise.all(
        ids.map((id, i) => stack.nodes[(i + 2) % 3]!.ingress.get(`restate/attach/${id}`)),
      );
      t.deepEqual(
        results.map((r) => r.body),
        tags.map((tag) => JSON.stringify({ resolvedWith: tag })),
      );

      // An admin kill through a node that does not own the invocation.
      const waiting = await Promise.all(
        tags.map((tag) => stack.any().ingress.post('restate/send/Signals/wait', { json: { tag: `k-${tag}` } })),
      );
      const killIds = waiting.map((r) => (JSON.parse(r.body) as { invocationId: string }).invocationId);
      const killed = await Promise.all(killIds.map((id) => stack.any().admin.patch(`invocations/${id}/kill`)));
      t.deepEqual(
        killed.map((r) => r.statusCode),
        killIds.map(() => 200),
      );
      const after = await Promise.all(killIds.map((id) => stack.any().ingress.get(`restate/attach/${id}`)));
      t.deepEqual(
        after.map((r) => r.statusCode),
        killIds.map(() => 409),
      );
    } finally {
      await stack.stop();
    }
  },
);

test.serial(
  'failover: SIGKILL of one node under load: its partitions are owned by the others within the lease bound, every acknowledged add completes, no key stuck',
  onThreeNodes(failoverUnderLoad),
);

test.serial(
  'SIGTERM of a node under load hands its partitions over without waiting for the leases to run out',
  async (t) => {
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
      t.deepEqual(
        rows.filter((r) => r.node_id === 'node-1'),
        [],
        'released, not left to run out',
      );
      await waitFor(async () => (await stack.partitions(staying[0]!)).every((r) => r.node_id === 'node-0'), 2_000);
      t.log(
        `SIGTERM to every partition owned by the other node: ${Date.now() - started} ms (the stop itself ${stoppedMs} ms)`,
      );
      const until = load.rounds() + 2;
      await waitFor(async () => load.rounds() >= until, 60_000);
      await load.stop();
      await checkAdds(t, stack, load.acked, load.unknown, staying);
      t.deepEqual(
        [...load.unknown.values()].filter((n) => n > 0),
        [],
        `no send through the staying node was refused: ${lastRefusal()}`,
      );
    } finally {
      endLoads();
      await stack.stop();
    }
  },
);

test.serial(
  'a node paused past its lease (SIGSTOP) is fenced off: its partitions move, it stops their work when it wakes, and it rejoins cleanly',
  async (t) => {
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
      await waitFor(
        async () =>
          /lost partition \d+: its lease was not renewed|lost partition \d+: another node acquired it/.test(
            zombie.server.output(),
          ),
        10_000,
      );
      // It rejoins: the partitions are spread over both nodes again.
      await waitFor(async () => {
        const rows = await stack.partitions(stack.nodes[0]!);
        return rows.filter((r) => r.node_id === 'node-1').length === 12;
      }, 20_000);
      const fenced = (await scrape(`${zombie.server.node}/metrics`)).scrape;
      const refused = (where: string) =>
        fenced.labelSets('redstate_fenced_commits_total').some((l) => l['where'] === where)
          ? fenced.value('redstate_fenced_commits_total', { where })
          : 0;
      t.log(
        `the zombie's commits refused after it woke: ${refused('node')} by its own lease check, ${refused('store')} by the store's epoch check`,
      );
      for (let round = 0; round < 2; round++) {
        await Promise.all(KEYS.map(async (key) => acked.get(key)!.push((await sendAdd(stack, key))!)));
      }
      // An add under way on the zombie when it stopped is run to its end by the new owner. The
      // zombie may still have had its Start (or a step's completion) unsent in its own buffers:
      // sent when it wakes, the SDK runs that attempt's next step once more (the stale attempt),
      // beside the key's next invocation, and nothing that attempt does can be stored any more.
      // So at most one stale attempt a key, never two invocations inside the handler at once.
      await checkAdds(t, stack, acked, new Map(), stack.nodes, 1);
      // The state counts every add exactly once (checkAdds). The 'exit' step of an add may run
      // twice: once for the zombie, whose result was never stored, and again on the new owner.
      const c = await stack.counts();
      t.log(
        `stale attempts after the zombie woke: ${
          KEYS.filter((k) => c[`stale:${k}`])
            .map((k) => `${k}×${c[`stale:${k}`]}`)
            .join(', ') || 'none'
        }`,
      );
      for (const key of KEYS) t.true(c[`adds:${key}`]! >= acked.get(key)!.length + 1, key);
    } finally {
      resumeAll(stack);
      await stack.stop();
    }
  },
);

/** A test that failed while the node was stopped must not leave it stopped: SIGTERM would wait forever. */
function resumeAll(stack: ClusterStack): void {
  for (const n of stack.nodes) n.server.signal('SIGCONT');
}

test('one process per data dir, and the partition count stays what the store was created with', async (t) => {
  const redis = await startRedis();
  const first = await startRedstate({ redisUrl: redis.url, env: { REDSTATE_PARTITIONS: '8' } });
  try {
    const again = await runToExit({
      REDSTATE_REDIS_URL: redis.url,
      REDSTATE_DATA_DIR: first.dataDir,
      REDSTATE_INGRESS_PORT: '0',
      REDSTATE_ADMIN_PORT: '0',
      REDSTATE_NODE_PORT: '0',
    });
    t.not(again.code, 0);
    t.regex(again.output, /the data dir .* is in use by another redstate process \(pid \d+\)/);
    const other = await runToExit({
      REDSTATE_REDIS_URL: redis.url,
      REDSTATE_DATA_DIR: await mkdtemp(path.join(tmpdir(), 'redstate-data-')),
      REDSTATE_PARTITIONS: '24',
      REDSTATE_INGRESS_PORT: '0',
      REDSTATE_ADMIN_PORT: '0',
      REDSTATE_NODE_PORT: '0',
    });
    t.not(other.code, 0);
    t.regex(other.output, /this store was created with 8 partitions; REDSTATE_PARTITIONS=24 cannot change that/);
  } finally {
    await first.stop();
    await redis.stop();
  }
});
