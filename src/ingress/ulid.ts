/**
 * ULIDs (26 characters of Crockford base32: 48 bits of milliseconds, then 80 random bits), the
 * form of the idempotency key Restate gives every ingress call or send without one
 * (reference-behavior.md §1.3, §2.5).
 */
import { randomBytes } from '../random.js';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function ulid(now: number = Date.now()): string {
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32]! + time;
  let bits = 0n;
  for (const byte of randomBytes(10)) bits = (bits << 8n) | BigInt(byte);
  let random = '';
  for (let i = 0; i < 16; i++, bits >>= 5n) random = ALPHABET[Number(bits & 31n)]! + random;
  return time + random;
}
