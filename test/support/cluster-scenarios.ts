/**
 * The cluster tests that run unchanged over either store nodes can share (issue 13: one Redis,
 * and a Redis Cluster "with the same load and failover tests"): test/e2e/cluster.test.ts and
 * test/e2e/cluster-redis-cluster.test.ts each run them through `onThreeNodes` on their store.
 */
import type { ExecutionContext } from 'ava';
import { startCluster, type ClusterOptions, type ClusterStack } from './cluster.js';
import { addLoad, checkAdds, endLoads, KEYS, lastRefusal, sendAdd } from './cluster-load.js';
import { waitFor } from './wait.js';

/** A test's body: `scenario` on 3 fresh nodes sharing the store of `opts`, all stopped after. */
export function onThreeNodes(
  scenario: (t: ExecutionContext, stack: ClusterStack) => Promise<void>,
  opts: ClusterOptions = {},
) {
  return async (t: ExecutionContext): Promise<void> => {
    const stack = await startCluster(3, opts);
    try {
      await scenario(t, stack);
    } finally {
      await stack.stop();
    }
  };
}

/** Partitions spread 8/8/8; sends and calls through every ingress; 50 keys added through random nodes: exact counts, no overlap. */
export async function spreadAndAdds(t: ExecutionContext, stack: ClusterStack): Promise<void> {
  const rows = await stack.partitions(stack.nodes[2]!);
  const per = new Map<string, number>();
  for (const r of rows) per.set(r.node_id!, (per.get(r.node_id!) ?? 0) + 1);
  t.deepEqual([...per.values()].sort(), [8, 8, 8]);
  const health = JSON.parse((await stack.nodes[1]!.admin.get('cluster-health')).body) as {
    nodes: Array<{ node_id: string; partitions: number[] }>;
  };
  t.deepEqual(
    health.nodes.map((n) => n.node_id),
    ['node-0', 'node-1', 'node-2'],
  );

  // Sends and calls spread over the three ingress ports, attach through others.
  const acked = new Map<string, string[]>(KEYS.map((k) => [k, []]));
  const ROUNDS = 4;
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(
      KEYS.map(async (key) => {
        const id = await sendAdd(stack, key);
        t.truthy(id, `send to ${key} refused: ${lastRefusal()}`);
        acked.get(key)!.push(id!);
      }),
    );
  }
  // Unkeyed calls (created where they arrive) and idempotent ones (forwarded to the key's owner).
  const once = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      stack.nodes[i % 3]!.ingress.post('restate/call/Once/run', {
        json: { tag: `u${i}` },
        headers: i % 2 ? { 'idempotency-key': `ik${i}` } : {},
      }),
    ),
  );
  t.deepEqual(
    once.map((r) => r.body),
    Array.from({ length: 30 }, (_, i) => `"u${i}:1"`),
  );
  await checkAdds(t, stack, acked, new Map(), stack.nodes);
  // Exactly what was sent: the next call through any node sees every add.
  const calls = await Promise.all(
    KEYS.map((key) => stack.any().ingress.post(`restate/call/Counter/${key}/add`, { json: { delta: 1 } })),
  );
  t.deepEqual(
    calls.map((r) => r.body),
    KEYS.map(() => String(ROUNDS + 1)),
  );
  const c = await stack.counts();
  for (const key of KEYS) t.is(c[`adds:${key}`], ROUNDS + 2, key);
}

/** SIGKILL of node-2 under load: its partitions owned by the others within the lease bound, every acknowledged add completes, no key stuck. */
export async function failoverUnderLoad(t: ExecutionContext, stack: ClusterStack): Promise<void> {
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
    endLoads();
  }
}
