/**
 * Ids of the other admin resources (reference-behavior.md §1.3): subscriptions
 * (`sub_1` + a random u128 in 22 base-62 digits, 27 characters, like deployment ids) and
 * virtual queues (`vq_1` + partition key (11 digits) + u128 (22 digits)). Only their shape is
 * checked (src/protocol/ids.ts), with the reference's reasons.
 */
import { createHash, randomBytes } from 'node:crypto';
import { IdError, checkVqueueIdForm, parseU128Id } from '../protocol/ids.js';

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

/** The reference's reason when `parse` refuses an id. */
function verdict(parse: () => unknown): IdCheck {
  try {
    parse();
    return { ok: true };
  } catch (err) {
    if (err instanceof IdError) return { ok: false, reason: err.reason };
    throw err;
  }
}

export function newSubscriptionId(): string {
  return `sub_${CODEC_VERSION}${encode(BigInt('0x' + randomBytes(16).toString('hex')), U128_DIGITS)}`;
}

export const checkSubscriptionId = (text: string): IdCheck => verdict(() => parseU128Id(text, 'sub'));

export const checkVqueueId = (text: string): IdCheck => verdict(() => checkVqueueIdForm(text));

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
