/**
 * Partitions are the unit of ownership and atomicity (design.md, "Scaling past one machine"):
 * every key of an invocation, object or workflow lives in the partition of its partition key.
 * Like Restate, the u64 key space is cut into equal ranges, so the partition of a key depends
 * only on the (fixed) partition count.
 */
export function partitionOf(partitionKey: bigint, partitions: number): number {
  return Number((partitionKey * BigInt(partitions)) >> 64n);
}
