/**
 * Ids of the other admin resources (reference-behavior.md §1.3): subscriptions
 * (`sub_1` + a random u128 in 22 base-62 digits, 27 characters, like deployment ids) and
 * virtual queues (`vq_1` + partition key (11 digits) + u128 (22 digits)). Only their shape is
 * checked; the reasons are the reference's wording.
 */
import { createHash, randomBytes } from 'node:crypto';
import { wrongResourceType } from '../protocol/ids.js';

// Restate's digit order (lowercase before uppercase), as in deployment-id.ts.
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const CODEC_VERSION = '1';
const U64_DIGITS = 11;
const U128_DIGITS = 22;

export type IdCheck = { ok: true } | { ok: false; reason: string };

function encode(n: bigint, digits: number): string {
  let out = '';
  for (let i = 0; i < digits; i++) {
    out = ALPHABET[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out;
}

function decodeGroup(text: string, bits: bigint): boolean {
  let n = 0n;
  for (const ch of text) {
    const d = ALPHABET.indexOf(ch);
    if (d < 0) return false;
    n = n * 62n + BigInt(d);
  }
  return n < 1n << bits;
}

/** `<prefix>_1<groups…>`; `groups` are the bit widths of the base-62 groups, in order. */
function check(text: string, prefix: string, groups: Array<64 | 128>): IdCheck {
  const sep = text.indexOf('_');
  if (sep < 0) return { ok: false, reason: 'bad format' };
  if (text.slice(0, sep) !== prefix) return { ok: false, reason: wrongResourceType(text.slice(0, sep)) };
  const rest = text.slice(sep + 1);
  if (rest.length === 0) return { ok: false, reason: 'bad length' };
  if (rest[0] !== CODEC_VERSION) return { ok: false, reason: 'unrecognized codec version' };
  let body = rest.slice(1);
  const width = groups.reduce((sum, g) => sum + (g === 64 ? U64_DIGITS : U128_DIGITS), 0);
  if (body.length !== width) return { ok: false, reason: 'bad length' };
  for (const g of groups) {
    const digits = g === 64 ? U64_DIGITS : U128_DIGITS;
    if (!decodeGroup(body.slice(0, digits), BigInt(g))) return { ok: false, reason: 'bad format' };
    body = body.slice(digits);
  }
  return { ok: true };
}

export function newSubscriptionId(): string {
  return `sub_${CODEC_VERSION}${encode(BigInt('0x' + randomBytes(16).toString('hex')), U128_DIGITS)}`;
}

export const checkSubscriptionId = (text: string): IdCheck => check(text, 'sub', [128]);

export const checkVqueueId = (text: string): IdCheck => check(text, 'vq', [64, 128]);

/**
 * A virtual queue's id: its scope's partition key, then the first 128 bits of SHA-256 over what
 * names the queue, so the same queue always gets the same id.
 */
export function vqueueIdOf(partitionKey: bigint, parts: Array<string | null>): string {
  const digest = createHash('sha256').update(JSON.stringify(parts), 'utf8').digest();
  return `vq_${CODEC_VERSION}${encode(partitionKey, U64_DIGITS)}${encode(BigInt('0x' + digest.subarray(0, 16).toString('hex')), U128_DIGITS)}`;
}

/** The partition key a well-formed virtual queue id carries (`checkVqueueId` passed). */
export function vqueuePartitionKey(id: string): bigint {
  let n = 0n;
  for (const ch of id.slice(4, 4 + U64_DIGITS)) n = n * 62n + BigInt(ALPHABET.indexOf(ch));
  return n;
}
