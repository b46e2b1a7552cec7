/**
 * `Coordination` over the embedded store's files (store/types.ts), for workers that share one
 * LMDB environment on one machine (src/workers.ts): the leases, fencing epochs and node
 * registry the Redis store keeps in lua/lease.lua and lua/nodes.lua, kept in the table
 * `coordination` and changed in the store's write transactions. LMDB serializes write
 * transactions across processes (its lock file's mutex), so a read-then-write here is atomic
 * as a Lua script is in Redis, and the epoch check of a commit (`epochOf`) runs in the very
 * transaction that writes it. Expiry uses this machine's clock, which every worker shares.
 *
 *   ('partitions')         -> the partition count, fixed once
 *   ('lease', p)           -> {holder, expiresAt}   absent: nobody holds it
 *   ('epoch', p)           -> fencing epoch: raised by every acquisition, never lowered
 *   ('node', id)           -> {info, expiresAt}     a live node and how to reach it
 */
import { byNodeId, decodeJson, encodeJson } from '../codec.js';
import type { Tenure } from '../tenure.js';
import type { Coordination, LeaseInfo, NodeInfo } from '../types.js';
import type { Table } from './tables.js';
import { prefixRange, tupleKey } from './tuple.js';

interface Lease {
  holder: string;
  expiresAt: number;
}

interface LiveNode {
  nodeId: string;
  info: Omit<NodeInfo, 'nodeId' | 'seenAt'>;
  expiresAt: number;
}

/** What the coordination needs of the store it lives in. */
export interface CoordinationFiles {
  table: Table;
  /** Runs `change` in the next group-committed write transaction; resolves with its result once durable. */
  write<T>(change: () => T): Promise<T>;
  /** Runs `read` on what the other processes committed up to now. */
  read<T>(read: () => T): T;
}

const PARTITIONS = tupleKey('partitions');
const leaseKey = (p: number) => tupleKey('lease', p);
const epochKey = (p: number) => tupleKey('epoch', p);
const nodeKey = (id: string) => tupleKey('node', id);

const json = (value: unknown) => Buffer.from(encodeJson(value, 'coordination record'));
const parse = <T>(stored: Buffer | undefined): T | undefined =>
  stored === undefined ? undefined : (decodeJson(stored) as T);

export class EmbeddedCoordination implements Coordination {
  constructor(
    private readonly files: CoordinationFiles,
    readonly tenure: Tenure,
  ) {}

  async fixPartitionCount(count: number): Promise<number> {
    return this.files.write(() => {
      const stored = parse<number>(this.table.get(PARTITIONS));
      if (stored !== undefined) return stored;
      this.table.putSync(PARTITIONS, json(count));
      return count;
    });
  }

  async heartbeat(node: NodeInfo, ttlMs: number): Promise<NodeInfo[]> {
    const { nodeId, seenAt: _, ...info } = node;
    return this.files.write(() => {
      const now = Date.now();
      this.table.putSync(nodeKey(nodeId), json({ nodeId, info, expiresAt: now + ttlMs } satisfies LiveNode));
      const live: NodeInfo[] = [];
      for (const { key, value } of [...this.table.getRange(prefixRange('node'))]) {
        const entry = parse<LiveNode>(value)!;
        if (entry.expiresAt <= now) this.table.removeSync(key);
        else live.push({ ...entry.info, nodeId: entry.nodeId, seenAt: now });
      }
      return live.sort(byNodeId);
    });
  }

  async leave(nodeId: string): Promise<void> {
    await this.files.write(() => this.table.removeSync(nodeKey(nodeId)));
  }

  async acquire(partition: number, nodeId: string, ttlMs: number): Promise<number | undefined> {
    return this.files.write(() => {
      const now = Date.now();
      const lease = this.leaseOf(partition, now);
      // A lease of this very node id is taken over: its previous process died (or is a zombie,
      // which the new epoch fences off).
      if (lease && lease.holder !== nodeId) return undefined;
      const epoch = this.epochOf(partition) + 1;
      this.table.putSync(leaseKey(partition), json({ holder: nodeId, expiresAt: now + ttlMs } satisfies Lease));
      this.table.putSync(epochKey(partition), json(epoch));
      return epoch;
    });
  }

  /** Also takes back a lease that ran out while nobody acquired it (as redis/lua/lease.lua does). */
  async renew(partition: number, nodeId: string, epoch: number, ttlMs: number): Promise<boolean> {
    return this.files.write(() => {
      const now = Date.now();
      const holder = this.leaseOf(partition, now)?.holder;
      if ((holder !== undefined && holder !== nodeId) || this.epochOf(partition) !== epoch) return false;
      this.table.putSync(leaseKey(partition), json({ holder: nodeId, expiresAt: now + ttlMs } satisfies Lease));
      return true;
    });
  }

  async release(partition: number, nodeId: string, epoch: number): Promise<void> {
    await this.files.write(() => {
      if (!this.heldAt(partition, nodeId, epoch, Date.now())) return;
      this.table.removeSync(leaseKey(partition));
      // Raised, so that a renewal sent before the release cannot take the lease back.
      this.table.putSync(epochKey(partition), json(epoch + 1));
    });
  }

  async leases(partitions: number): Promise<LeaseInfo[]> {
    return this.files.read(() => {
      const now = Date.now();
      return Array.from({ length: partitions }, (_, partition) => {
        const lease = this.leaseOf(partition, now);
        return {
          partition,
          nodeId: lease?.holder,
          epoch: this.epochOf(partition),
          expiresAt: lease?.expiresAt,
        };
      });
    });
  }

  /**
   * Inside a commit's write transaction: the partition's epoch now, to compare with the one the
   * committer holds (a commit carrying another is refused whole, as lua/commit-transition.lua does).
   */
  epochOf(partition: number): number {
    return parse<number>(this.table.get(epochKey(partition))) ?? 0;
  }

  private get table(): Table {
    return this.files.table;
  }

  /** The partition's lease unless it ran out by `now` (Redis drops an expired key by itself). */
  private leaseOf(partition: number, now: number): Lease | undefined {
    const lease = parse<Lease>(this.table.get(leaseKey(partition)));
    return lease && lease.expiresAt > now ? lease : undefined;
  }

  private heldAt(partition: number, nodeId: string, epoch: number, now: number): boolean {
    return this.leaseOf(partition, now)?.holder === nodeId && this.epochOf(partition) === epoch;
  }
}
