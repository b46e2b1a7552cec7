/**
 * Who should own how many partitions, and what one node does about it in one round. Pure: the
 * node's loop (cluster-node.ts) feeds it what Redis said. Every node computes the same shares
 * from the same sorted list of live nodes; leases (SET NX) settle any race.
 */

/** Partitions node `index` of `nodes` live nodes should own: an even spread, the first ones one more. */
export function fairShare(partitions: number, nodes: number, index: number): number {
  return Math.floor(partitions / nodes) + (index < partitions % nodes ? 1 : 0);
}

export interface RoundView {
  partitions: number;
  self: string;
  /** Live node ids, sorted; `self` among them. */
  nodes: readonly string[];
  /** Holder of each partition's lease now (undefined: free). */
  holders: ReadonlyArray<string | undefined>;
  /** Partitions that were already free in the previous round. */
  freeBefore: ReadonlySet<number>;
}

export interface RoundPlan {
  acquire: number[];
  /** Surplus handed over gracefully, so that nodes below their share can take it. */
  release: number[];
}

export function planRound(v: RoundView): RoundPlan {
  const index = Math.max(0, v.nodes.indexOf(v.self));
  const share = fairShare(v.partitions, v.nodes.length, index);
  const owned: number[] = [];
  const free: number[] = [];
  const count = new Map<string, number>();
  v.holders.forEach((holder, p) => {
    if (holder === undefined) free.push(p);
    else count.set(holder, (count.get(holder) ?? 0) + 1);
    if (holder === v.self) owned.push(p);
  });
  // Nodes start looking at different partitions, so they rarely race for the same ones.
  const offset = Math.floor((index * v.partitions) / v.nodes.length);
  free.sort((a, b) => ((a - offset + v.partitions) % v.partitions) - ((b - offset + v.partitions) % v.partitions));
  const wanted = Math.max(0, share - owned.length);
  // A partition free for a whole round has nobody below their share taking it (its owner died
  // and still counts as live): anyone takes it, and the surplus is handed over later.
  const acquire = [...free.slice(0, wanted), ...free.slice(wanted).filter((p) => v.freeBefore.has(p))];

  let deficit = -free.length;
  v.nodes.forEach((node, i) => {
    if (node !== v.self) deficit += Math.max(0, fairShare(v.partitions, v.nodes.length, i) - (count.get(node) ?? 0));
  });
  const surplus = Math.min(owned.length - share, deficit);
  const release = surplus > 0 ? owned.slice(-surplus) : [];
  return { acquire, release };
}
