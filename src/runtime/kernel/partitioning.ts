/**
 * Partitions are the unit of ownership and atomicity (design.md, "Scaling past one machine"):
 * every key of an invocation, object or workflow lives in the partition of its partition key.
 * Like Restate, the u64 key space is cut into equal ranges, so the partition of a key depends
 * only on the (fixed) partition count.
 */
import { randomBytes } from '../../random.js';

export function partitionOf(partitionKey: bigint, partitions: number): number {
  return Number((partitionKey * BigInt(partitions)) >> 64n);
}

/** A random partition key of `partition`: the keys k with floor(k * partitions / 2^64) = partition. */
export function randomKeyIn(partition: number, partitions: number): bigint {
  const n = BigInt(partitions);
  const first = (BigInt(partition) * 2n ** 64n + n - 1n) / n;
  const end = (BigInt(partition + 1) * 2n ** 64n + n - 1n) / n;
  return first + (randomBytes(8).readBigUInt64BE(0) % (end - first));
}
