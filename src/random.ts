/**
 * Random bytes for ids, served from a pooled buffer: one call into the CSPRNG per 4 KiB
 * instead of one per id (an ingress call needs three).
 */
import { randomFillSync } from 'node:crypto';

const pool = Buffer.allocUnsafe(4096);
let offset = pool.length;

export function randomBytes(n: number): Buffer {
  if (n > pool.length) return randomFillSync(Buffer.allocUnsafe(n));
  if (offset + n > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  // A copy: the pool is refilled later, and ids must never change under their holders.
  const out = Buffer.from(pool.subarray(offset, offset + n));
  offset += n;
  return out;
}
