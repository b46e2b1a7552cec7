/**
 * One node among several sharing a Redis (design.md, "Scaling past one machine"): it announces
 * itself in the node registry, holds leases on its fair share of the partitions, renews them
 * well before they run out, hands surplus over when nodes join, and takes what dead nodes
 * left. It is the runtime's `Placement`: only partitions it holds have actors, timers,
 * deliveries and recovery here, and work for any other partition is forwarded to its owner.
 *
 * Timing (all in this node's monotonic clock): a lease lasts LEASE_MS and is renewed every
 * ROUND_MS, on a timer of its own; a partition counts as held only until LEASE_MS - SAFETY_MS
 * after the last renewal that succeeded was *sent*. The store refuses its commits from then
 * on, and a watchdog stops the partition's work unless one more renewal shows nobody took it,
 * all before Redis would let another node take it. A node that was paused is fenced by the
 * epoch its successor's acquisition raised.
 */
import { settledWithin } from '../settled-within.js';
import type http2 from 'node:http2';
import { Misdirected, Unavailable } from '../errors.js';
import type { Runtime } from '../runtime/runtime.js';
import { FORWARDED_OPS, type ForwardedOp, type Placement } from '../runtime/types.js';
import type { Coordination, LeaseInfo, NodeInfo, PartitionTenure } from '../store/types.js';
import type { Logger } from '../telemetry/log.js';
import { partitionsOwned } from '../telemetry/metrics.js';
import { callPeer, PeerUnreachable, tellPeer, type Announcement } from './peers.js';
import { planRound } from './shares.js';

export const LEASE_MS = 3000;
const ROUND_MS = 500;
const SAFETY_MS = 1000;
const WATCHDOG_MS = 100;
/** How long a forwarded operation looks for a reachable owner before answering 503. */
const FORWARD_PATIENCE_MS = 10_000;
const FORWARD_RETRY_MS = 200;
/** How long a change waits for each other node to take in its announcement (else its next round does). */
const ANNOUNCE_PATIENCE_MS = 1000;

/** What the node drives in the runtime. */
export interface PartitionHost extends Pick<Runtime, 'acquirePartition' | 'serve'> {
  /** Stops the partition's work here; a hand-over gives the lease up once this settles. */
  releasePartition(partition: number): void | Promise<void>;
}

export interface ClusterNodeOptions {
  coordination: Coordination;
  partitions: number;
  nodeId: string;
  log: Logger;
  /** Called every round: other nodes may have changed the registry. */
  refresh?: () => Promise<void>;
  /** Sizes the h2c sessions to the other nodes (forwarded bodies up to the request size limit). */
  peerSessions: http2.SessionOptions;
}

export class ClusterNode implements Placement {
  /** Partitions whose validity passed, with a renewal sent to confirm them (the event loop stalled, or Redis was slow). */
  private readonly confirming = new Set<number>();
  private ownedList: number[] = [];
  private nodes: NodeInfo[] = [];
  private leases: LeaseInfo[] = [];
  private freeBefore = new Set<number>();
  private host: PartitionHost | undefined;
  private self: NodeInfo | undefined;
  private loop: NodeJS.Timeout | undefined;
  private renewals: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private leaseRead: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly opts: ClusterNodeOptions) {}

  get nodeId(): string {
    return this.opts.nodeId;
  }

  /** The partitions this node holds: the store's view, which its commits are fenced by (store/tenure.ts). */
  private get tenure(): PartitionTenure {
    return this.opts.coordination.tenure;
  }

  owns(partition: number): boolean {
    return this.tenure.has(partition);
  }

  owned(): readonly number[] {
    return this.ownedList;
  }

  /** The live nodes and the leases as last read (`/cluster-health`). */
  view(): { nodeId: string; nodes: NodeInfo[]; leases: LeaseInfo[] } {
    return { nodeId: this.nodeId, nodes: this.nodes, leases: this.leases };
  }

  /**
   * Joins: the first round takes this node's share (all partitions when it is alone) and
   * resolves once their recovery is done, so nothing is served before. `nodeUrl`: where the
   * other nodes reach this one's node port.
   */
  async start(host: PartitionHost, nodeUrl: string): Promise<void> {
    this.host = host;
    this.self = { nodeId: this.nodeId, node: nodeUrl };
    const stored = await this.opts.coordination.fixPartitionCount(this.opts.partitions);
    if (stored !== this.opts.partitions) {
      throw new Error(
        `this store was created with ${stored} partitions; REDSTATE_PARTITIONS=${this.opts.partitions} cannot change that (set it to ${stored}, or use a new store)`,
      );
    }
    this.watchdog = setInterval(() => this.checkLeases(), WATCHDOG_MS);
    await Promise.all(await this.round());
    this.renewEvery();
    this.opts.log.info(
      { node_id: this.nodeId, partitions: this.ownedList.length, nodes: this.nodes.length },
      `node ${this.nodeId}: owns ${this.ownedList.length} of ${this.opts.partitions} partitions, ${this.nodes.length} node(s) live`,
    );
    this.schedule();
  }

  async forward(partition: number, op: ForwardedOp, args: unknown[]): Promise<unknown> {
    const deadline = performance.now() + FORWARD_PATIENCE_MS;
    for (;;) {
      // Acquired here meanwhile (its owner left or died): done here.
      if (this.owns(partition)) return this.host!.serve(partition, op, args);
      const owner = this.ownerOf(partition);
      if (owner) {
        try {
          return await callPeer(owner.node, partition, op, args, this.opts.peerSessions);
        } catch (err) {
          const again =
            err instanceof Misdirected ||
            (err instanceof PeerUnreachable && (!err.sent || FORWARDED_OPS[op].resendable));
          if (!again)
            throw err instanceof PeerUnreachable
              ? new Unavailable(`the owner of partition ${partition} did not answer: ${err.message}`)
              : err;
        }
      }
      if (performance.now() > deadline)
        throw new Unavailable(`partition ${partition} has no reachable owner now; retry later`);
      await new Promise((r) => setTimeout(r, FORWARD_RETRY_MS));
      await this.readLeases();
    }
  }

  /**
   * Tells every other live node of a change to what they share (the registry: a deployment
   * registered here is known there when its registration is answered), each waited for at most
   * ANNOUNCE_PATIENCE_MS; a node that does not answer by then reads it again in its next round.
   * The live nodes are read again, after the change was stored: a node that joined since this
   * one's last round is told too, and one that joins later reads the change itself (a node
   * refreshes after it joins, before it serves).
   */
  async announce(what: Announcement): Promise<void> {
    const live = this.self
      ? await this.opts.coordination.heartbeat(this.self, LEASE_MS).catch(() => this.nodes)
      : this.nodes;
    const others = live.filter((n) => n.nodeId !== this.nodeId);
    await Promise.all(
      others.map((n) =>
        settledWithin(
          tellPeer(n.node, what, this.opts.peerSessions).catch((err: unknown) =>
            this.opts.log.debug({ err }, `node ${this.nodeId}: node ${n.nodeId} did not take in the ${what} change`),
          ),
          ANNOUNCE_PATIENCE_MS,
          () => undefined,
        ),
      ),
    );
  }

  /** Graceful leave (SIGTERM), once the runtime has stopped: every lease handed over, then out of the registry. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.loop);
    clearTimeout(this.renewals);
    clearInterval(this.watchdog);
    await this.current?.catch(() => undefined);
    await Promise.all(this.tenure.partitions().map((p) => this.handOver(p).catch(() => undefined)));
    await this.opts.coordination.leave(this.nodeId).catch(() => undefined);
  }

  private ownerOf(partition: number): NodeInfo | undefined {
    const holder = this.leases[partition]?.nodeId;
    if (holder === undefined || holder === this.nodeId) return undefined;
    return this.nodes.find((n) => n.nodeId === holder);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.loop = setTimeout(() => {
      this.current = this.round().then(
        () => undefined,
        (err: unknown) =>
          this.opts.log.warn(
            { err },
            `node ${this.nodeId}: cluster round failed: ${err instanceof Error ? err.message : String(err)}`,
          ),
      );
      void this.current.finally(() => this.schedule());
    }, ROUND_MS);
  }

  /**
   * Renewals run on their own timer, so that a slow round (hand-overs waiting for commits,
   * a busy Redis) never delays them.
   */
  private renewEvery(): void {
    if (this.stopped) return;
    this.renewals = setTimeout(() => void this.renewAll().finally(() => this.renewEvery()), ROUND_MS);
  }

  /** Announce, read the leases, hand over surplus, take what is due. Resolves with the recoveries started. */
  private async round(): Promise<Array<Promise<unknown>>> {
    this.nodes = await this.opts.coordination.heartbeat(this.self!, LEASE_MS);
    await this.readLeases();
    // A lease under this node's id that this process does not hold is its previous process's
    // (it crashed): free for this one to take over at once. One this process holds is its own
    // even when it ran out in the store: its renewal takes it back unless another node
    // acquired it (then the renewal fails and the partition is lost). Taken as free, this node
    // acquired it anew: a new epoch, and its work in flight fenced and done again.
    const holders = this.leases.map((l, p) =>
      this.tenure.has(p) ? this.nodeId : l.nodeId === this.nodeId ? undefined : l.nodeId,
    );
    const plan = planRound({
      partitions: this.opts.partitions,
      self: this.nodeId,
      nodes: this.nodes.map((n) => n.nodeId),
      holders,
      freeBefore: this.freeBefore,
    });
    this.freeBefore = new Set(holders.flatMap((h, p) => (h === undefined ? [p] : [])));
    await Promise.all(plan.release.map((p) => this.handOver(p)));
    const recoveries = (await Promise.all(plan.acquire.map((p) => this.take(p)))).filter(
      (r): r is Promise<unknown> => r !== undefined,
    );
    await this.opts.refresh?.().catch((err: unknown) => this.opts.log.warn({ err }, 'registry refresh failed'));
    return recoveries;
  }

  private async renewAll(): Promise<void> {
    await Promise.all(
      this.tenure.partitions().map(async (p) => {
        const epoch = this.tenure.epochOf(p)!;
        const sent = performance.now();
        let renewed: boolean;
        try {
          renewed = await this.opts.coordination.renew(p, this.nodeId, epoch, LEASE_MS);
        } catch {
          return; // Redis did not answer: the watchdog lets the partition go once the lease may have run out.
        }
        if (this.tenure.epochOf(p) !== epoch) return;
        if (!renewed) return this.lose(p, 'another node acquired it');
        this.tenure.hold(p, epoch, sent + LEASE_MS - SAFETY_MS);
      }),
    );
  }

  /** Reads every lease, at most one read at a time. */
  private readLeases(): Promise<void> {
    this.leaseRead ??= this.opts.coordination.leases(this.opts.partitions).then(
      (leases) => {
        this.leases = leases;
        this.leaseRead = undefined;
      },
      (err: unknown) => {
        this.leaseRead = undefined;
        throw err;
      },
    );
    return this.leaseRead;
  }

  /** Acquires the partition; resolves with its recovery, or undefined when another node was faster. */
  private async take(p: number): Promise<Promise<unknown> | undefined> {
    if (this.stopped) return undefined;
    const sent = performance.now();
    const epoch = await this.opts.coordination.acquire(p, this.nodeId, LEASE_MS);
    if (epoch === undefined) return undefined;
    this.tenure.hold(p, epoch, sent + LEASE_MS - SAFETY_MS);
    this.changed();
    this.opts.log.debug({ partition: p, epoch }, `node ${this.nodeId}: acquired partition ${p} (epoch ${epoch})`);
    return this.host!.acquirePartition(p);
  }

  /** The lease is gone or may have run out: stop the partition's work at once, commit nothing more. */
  private lose(p: number, reason: string): void {
    if (!this.tenure.has(p)) return;
    void this.tenure.drop(p);
    this.changed();
    void this.host!.releasePartition(p);
    this.opts.log.warn({ partition: p }, `node ${this.nodeId}: lost partition ${p}: ${reason}; its work stopped here`);
  }

  /** Graceful: stop the partition's work, let commits in flight settle, then give the lease up. */
  private async handOver(p: number): Promise<void> {
    const epoch = this.tenure.epochOf(p);
    if (epoch === undefined) return;
    const settled = this.tenure.drop(p);
    this.changed();
    await Promise.all([settled, this.host!.releasePartition(p)]);
    await this.opts.coordination.release(p, this.nodeId, epoch);
    this.opts.log.debug({ partition: p }, `node ${this.nodeId}: handed partition ${p} over`);
  }

  /**
   * A partition whose validity passed commits nothing more (store/tenure.ts). One renewal,
   * answered within SAFETY_MS, may still show that nobody took it (a stalled event loop, a
   * slow round trip): it is kept. Otherwise its work stops here.
   */
  private checkLeases(): void {
    for (const p of this.tenure.lapsed(performance.now())) {
      if (this.confirming.has(p)) continue;
      this.confirming.add(p);
      void this.confirm(p, this.tenure.epochOf(p)!);
    }
  }

  private async confirm(p: number, epoch: number): Promise<void> {
    const sent = performance.now();
    const renewed = await settledWithin(
      this.opts.coordination.renew(p, this.nodeId, epoch, LEASE_MS).catch(() => false),
      SAFETY_MS,
      () => false,
    );
    this.confirming.delete(p);
    if (this.tenure.epochOf(p) !== epoch) return;
    if (!renewed) return this.lose(p, `its lease was not renewed within ${LEASE_MS - SAFETY_MS} ms`);
    this.tenure.hold(p, epoch, sent + LEASE_MS - SAFETY_MS);
  }

  private changed(): void {
    this.ownedList = this.tenure.partitions();
    partitionsOwned.set(this.ownedList.length);
  }
}
