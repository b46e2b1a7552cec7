/**
 * Partitions are the unit of ownership and atomicity (design.md, "Scaling past one machine"):
 * every key of an invocation, object or workflow lives in the partition of its partition key.
 * Like Restate, the u64 key space is cut into equal ranges, so the partition of a key depends
 * only on the (fixed) partition count.
 */
import { clockedPartitionKey, partitionKeyHalvesOf, partitionKeyOf } from '../protocol/ids.js';
import { randomBytes } from '../random.js';

export function partitionOf(partitionKey: bigint, partitions: number): number {
  return Number((partitionKey * BigInt(partitions)) >> 64n);
}

/**
 * The partition key of what a target names, when it names one: its scope's (every invocation
 * of a scope lives with the scope's limiter), else its object key's or workflow id's (so it
 * lives with the key's lock and state); undefined for an unkeyed, unscoped target.
 */
export function targetPartitionKey(target: {
  key?: string | undefined;
  scope?: string | undefined;
}): bigint | undefined {
  const by = target.scope ?? target.key;
  return by === undefined ? undefined : partitionKeyOf(by);
}

/** The partition of a keyed or scoped target (a key's state, lock and invocations). */
export function partitionOfTarget(target: { key: string; scope?: string | undefined }, partitions: number): number {
  return partitionOf(targetPartitionKey(target)!, partitions);
}

/**
 * The partition an invocation id names: `partitionOf` of its key, computed on the key's 32-bit
 * halves. floor(key * n / 2^64) = floor((hi * n + floor(lo * n / 2^32)) / 2^32), and every
 * product stays below 2^53 for n < 2^21 partitions, so it is exact.
 */
export function partitionOfId(id: string, partitions: number): number {
  const [hi, lo] = partitionKeyHalvesOf(id);
  if (partitions >= 2 ** 21) return partitionOf((BigInt(hi) << 32n) | BigInt(lo), partitions);
  return Math.floor((hi * partitions + Math.floor((lo * partitions) / 2 ** 32)) / 2 ** 32);
}

/**
 * A partition key of `partition` (the keys k with floor(k * partitions / 2^64) = partition) for
 * an unkeyed invocation made at `now`: ids.ts's `clockedPartitionKey` with a high 16 bits whose
 * every key lies in the partition; past 32,768 partitions, where a partition may hold no such
 * range, a random key of the partition.
 */
export function keyInAt(partition: number, partitions: number, now: number): bigint {
  const n = BigInt(partitions);
  const first = (BigInt(partition) * 2n ** 64n + n - 1n) / n;
  const end = (BigInt(partition + 1) * 2n ** 64n + n - 1n) / n;
  const lowestTop = Number((first + 2n ** 48n - 1n) >> 48n);
  const tops = Number(end >> 48n) - lowestTop;
  if (tops > 0) return clockedPartitionKey(lowestTop + Math.floor(Math.random() * tops), now);
  return first + (randomBytes(8).readBigUInt64BE(0) % (end - first));
}
