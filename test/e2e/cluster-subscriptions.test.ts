/**
 * Subscriptions with several nodes over one Redis (issue 13): one node consumes, the owner of
 * partition 0 (server.ts), so a Redis stream's messages are not split between nodes and each
 * key's messages are created in publish order. When that node stops (SIGTERM, then started
 * again) or dies (SIGKILL), the next owner of partition 0 goes on from what was left
 * unacknowledged: every message once, in key order. Every node shows the consumer's progress.
 */
import test from 'ava';
import { startCluster, type ClusterNodeHandle, type ClusterStack } from '../support/cluster.js';
import { sqlRows } from '../support/stack.js';
import {
  expectEveryMessageOnceInOrder,
  publishAll,
  streamProducer,
  subscribe,
  type Disruption,
} from '../support/streaming.js';

/** The node that owns partition 0 now (node ids are `node-<index>`, support/cluster.ts). */
async function consumerNode(stack: ClusterStack): Promise<ClusterNodeHandle> {
  const owner = (await stack.partitions(stack.nodes[0]!)).find((r) => r.partition_id === 0)?.node_id;
  const node = owner ? stack.nodes[Number(owner.replace('node-', ''))] : undefined;
  if (!node) throw new Error(`no node owns partition 0 (${owner})`);
  return node;
}

/** Stops the consuming node (SIGTERM or SIGKILL) and starts it again a moment later. */
const bounceConsumer = (stack: ClusterStack, atMs: number, how: 'SIGTERM' | 'SIGKILL'): Disruption => ({
  atMs,
  what: `${how} the node that consumes`,
  run: async () => {
    const node = await consumerNode(stack);
    if (how === 'SIGTERM') await node.server.terminate();
    else await node.server.kill();
    await new Promise((r) => setTimeout(r, 1000));
    await node.server.restart();
  },
});

test.serial(
  '3 nodes: a Redis stream is consumed by one node, also across a SIGTERM and a SIGKILL of that node: every message once, in key order',
  async (t) => {
    const stack = await startCluster(3, { serviceFile: 'subscriptions.mjs' });
    try {
      const id = await subscribe(stack.nodes[1]!.admin, 'redis-stream://orders');
      const p = streamProducer(stack.store.redisUrl!, 'orders');
      await publishAll((i) => p.publish(i), 9000, [
        bounceConsumer(stack, 2000, 'SIGTERM'),
        bounceConsumer(stack, 5500, 'SIGKILL'),
      ]);
      await p.close();
      await expectEveryMessageOnceInOrder(t, stack.nodes[2]!, 90_000);
      // Every node shows the consuming node's progress.
      for (const node of stack.nodes) {
        const rows = await sqlRows(node.admin, `SELECT status, lag FROM sys_subscription_progress WHERE id = '${id}'`);
        t.deepEqual(rows, [{ status: 'running', lag: 0 }]);
      }
    } finally {
      await stack.stop();
    }
  },
);
