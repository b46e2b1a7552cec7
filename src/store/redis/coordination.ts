/**
 * `Coordination` over Redis (store/types.ts): leases and the node registry are small Lua
 * scripts (lua/lease.lua, lua/nodes.lua), each within one hash tag, so they run unchanged on a
 * Redis Cluster. The partitions this node holds, and their fencing epochs, are the store's
 * `Tenure` (../tenure.ts), which its commits consult.
 */
import { byNodeId } from '../codec.js';
import type { RedisClient } from './connect.js';
import type { Tenure } from '../tenure.js';
import { StoreUnavailable, type Coordination, type LeaseInfo, type NodeInfo } from '../types.js';
import { nodeKeys, partitionCountKey, partitionKeys } from './keys.js';

type LeaseReply = number | [string, number, number, number];

export type CoordinatedRedis = RedisClient & {
  leaseOp(numKeys: number, ...args: Array<string | number>): Promise<LeaseReply>;
  nodesOp(numKeys: number, ...args: Array<string | number>): Promise<Array<string | number> | number>;
};

/** Runs one command through the store's availability rules (redis-store.ts `send`). */
export type Send = <T>(write: boolean, command: () => Promise<T>) => Promise<T>;

export class RedisCoordination implements Coordination {
  constructor(
    private readonly redis: CoordinatedRedis,
    private readonly send: Send,
    readonly tenure: Tenure,
  ) {}

  async fixPartitionCount(count: number): Promise<number> {
    await this.send(true, () => this.redis.set(partitionCountKey, String(count), 'NX'));
    const stored = await this.send(false, () => this.redis.get(partitionCountKey));
    if (stored === null) throw new StoreUnavailable('the partition count could not be read back', false);
    return Number(stored);
  }

  async heartbeat(node: NodeInfo, ttlMs: number): Promise<NodeInfo[]> {
    const { seenAt: _, ...announced } = node;
    const reply = await this.send(true, () =>
      this.redis.nodesOp(2, nodeKeys.live, nodeKeys.info, 'beat', node.nodeId, JSON.stringify(announced), ttlMs),
    );
    if (!Array.isArray(reply)) return [];
    const now = Number(reply[0]);
    const nodes: NodeInfo[] = [];
    for (let i = 1; i + 1 < reply.length; i += 2) {
      const info = JSON.parse(String(reply[i + 1])) as Omit<NodeInfo, 'nodeId'>;
      nodes.push({ ...info, nodeId: String(reply[i]), seenAt: now });
    }
    return nodes.sort(byNodeId);
  }

  async leave(nodeId: string): Promise<void> {
    await this.send(true, () => this.redis.nodesOp(2, nodeKeys.live, nodeKeys.info, 'leave', nodeId));
  }

  async acquire(partition: number, nodeId: string, ttlMs: number): Promise<number | undefined> {
    const epoch = Number(await this.lease(partition, 'acquire', nodeId, ttlMs));
    return epoch > 0 ? epoch : undefined;
  }

  async renew(partition: number, nodeId: string, epoch: number, ttlMs: number): Promise<boolean> {
    return Number(await this.lease(partition, 'renew', nodeId, ttlMs, epoch)) === 1;
  }

  async release(partition: number, nodeId: string, epoch: number): Promise<void> {
    await this.lease(partition, 'release', nodeId, 0, epoch);
  }

  async leases(partitions: number): Promise<LeaseInfo[]> {
    const replies = await Promise.all(Array.from({ length: partitions }, (_, p) => this.lease(p, 'read', '')));
    return replies.map((reply, partition) => {
      const [holder, epoch, ttl, now] = reply as [string, number, number, number];
      const held = holder !== '' && ttl >= 0;
      return {
        partition,
        nodeId: held ? holder : undefined,
        epoch: Number(epoch),
        expiresAt: held ? Number(now) + Number(ttl) : undefined,
      };
    });
  }

  private lease(partition: number, op: string, nodeId: string, ttlMs = 0, epoch = 0): Promise<LeaseReply> {
    const k = partitionKeys(partition);
    return this.send(op !== 'read', () => this.redis.leaseOp(2, k.lease, k.epoch, op, nodeId, ttlMs, epoch));
  }
}
