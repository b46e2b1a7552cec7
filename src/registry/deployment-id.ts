/**
 * Deployment ids: `dp_` + codec version `1` + a random 128-bit number in base62, zero-padded
 * to 22 digits — 26 characters, the shape of reference-behavior.md §1.3
 * (`dp_15mkDZVNLJ7axAH3QeEdtQt`), so the CLI and the UI accept ours.
 */
import { randomBytes } from 'node:crypto';

// Restate's base62 digit order (lowercase before uppercase), as in protocol/ids.ts: the CLI
// rejects ids whose value overflows 128 bits when read with it.
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = 22;
const PREFIX = 'dp_';
const CODEC_VERSION = '1';
const MAX = (1n << 128n) - 1n;

export function newDeploymentId(): string {
  let n = BigInt('0x' + randomBytes(16).toString('hex'));
  let digits = '';
  for (let i = 0; i < DIGITS; i++) {
    digits = ALPHABET[Number(n % 62n)]! + digits;
    n /= 62n;
  }
  return PREFIX + CODEC_VERSION + digits;
}

/**
 * Checks an id's shape. The reasons are the reference's wording, which the admin API puts in
 * `Invalid URL: Cannot parse `deployment` with value `…`: <reason>` (§3.3).
 */
export function checkDeploymentId(text: string): { ok: true } | { ok: false; reason: string } {
  if (!text.startsWith(PREFIX)) return { ok: false, reason: 'bad format' };
  const rest = text.slice(PREFIX.length);
  if (rest.length === 0) return { ok: false, reason: 'bad length' };
  if (rest[0] !== CODEC_VERSION) return { ok: false, reason: 'unrecognized codec version' };
  const digits = rest.slice(1);
  if (digits.length !== DIGITS) return { ok: false, reason: 'bad length' };
  let n = 0n;
  for (const ch of digits) {
    const d = ALPHABET.indexOf(ch);
    if (d < 0) return { ok: false, reason: 'bad format' };
    n = n * 62n + BigInt(d);
  }
  return n > MAX ? { ok: false, reason: 'bad format' } : { ok: true };
}
