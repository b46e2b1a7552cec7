/**
 * Identifiers (service-protocol.md §14, reference-behavior.md §1.3): invocation ids, awakeable
 * ids and deployment ids, in their binary and string forms.
 *
 * String ids look like `<resource>_<scheme version '1'><body>`. Parse errors carry Restate's
 * reason strings, which the ingress and admin APIs show to clients, e.g.
 * `bad invocation id 'inv_123': bad length` (reference-behavior.md §1.3, §3.3).
 */
import { createHash } from 'node:crypto';
import { randomBytes } from '../random.js';

export type IdErrorReason =
  | 'bad format'
  | 'bad length'
  | 'unrecognized codec version'
  | 'base62 decode error'
  | "id doesn't match the expected type"
  | `unrecognized resource type: ${string}`;

/** Restate's resource type prefixes (reference-behavior.md §1.3; `mut`: state mutations). */
const RESOURCE_TYPES = new Set(['inv', 'dp', 'sub', 'prom', 'sign', 'snap', 'mut', 'vq']);

export class IdError extends Error {
  constructor(readonly reason: IdErrorReason) {
    super(reason);
    this.name = 'IdError';
  }
}

export interface InvocationId {
  /** u64 */
  partitionKey: bigint;
  /** 16 bytes, big-endian u128 */
  uuid: Uint8Array;
}

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;

/** Characters needed for a u64 / u128 in base 62. */
const U64_WIDTH = 11;
const U128_WIDTH = 22;
const SCHEME_VERSION = '1';
const INVOCATION_ID_BYTES = 24;

// --- base 62 with Restate's byte-order quirk (§14) -------------------------------------------
/*
 * The number that is base-62 encoded is the byte group read as a little-endian integer
 * (restate-server byte-swaps before encoding, §14). Both directions work digit by digit on the
 * bytes themselves, which is much faster than BigInt arithmetic.
 */
const B62_CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const b62Number = new Uint8Array(16);
const b62Chars = Buffer.alloc(U128_WIDTH);

function base62(bytes: Uint8Array, width: number): string {
  const len = bytes.length;
  // Most significant byte first, so each pass is a schoolbook division by 62.
  for (let i = 0; i < len; i++) b62Number[i] = bytes[len - 1 - i]!;
  let first = 0;
  for (let pos = width - 1; pos >= 0; pos--) {
    let rem = 0;
    for (let i = first; i < len; i++) {
      const cur = rem * 256 + b62Number[i]!;
      const q = (cur / 62) | 0;
      b62Number[i] = q;
      rem = cur - q * 62;
    }
    while (first < len && b62Number[first] === 0) first++;
    b62Chars[pos] = B62_CODES[rem]!;
  }
  return b62Chars.toString('latin1', 0, width);
}

/** Decodes the group of `width` characters at `from` into `out[at, at + size)` (8 or 16 bytes, in wire order). */
function unbase62(text: string, from: number, width: number, out: Uint8Array, at: number, size: number): void {
  out.fill(0, at, at + size);
  for (let c = from; c < from + width; c++) {
    let carry = DIGIT[text.charCodeAt(c)] ?? -1;
    if (carry < 0) throw new IdError('base62 decode error');
    for (let i = at; i < at + size; i++) {
      const cur = out[i]! * 62 + carry;
      out[i] = cur & 0xff;
      carry = cur >>> 8;
    }
    if (carry !== 0) throw new IdError('base62 decode error');
  }
}

/**
 * The body of `<prefix>_<version><body>`, checked in restate-server's order (measured on
 * 1.7.12): nothing at all is a length error, no separator a format error, then the resource
 * type must be one Restate has (`unrecognized resource type: x`), a version must follow
 * (length) and be '1' (codec version), and only then must the type be `prefix`
 * (`id doesn't match the expected type`).
 */
export function idBody(s: string, prefix: string): string {
  if (s.length === 0) throw new IdError('bad length');
  const sep = s.indexOf('_');
  if (sep < 0) throw new IdError('bad format');
  const type = s.slice(0, sep);
  if (!RESOURCE_TYPES.has(type)) throw new IdError(`unrecognized resource type: ${type}`);
  if (s.length === sep + 1) throw new IdError('bad length');
  if (s[sep + 1] !== SCHEME_VERSION) throw new IdError('unrecognized codec version');
  if (type !== prefix) throw new IdError("id doesn't match the expected type");
  return s.slice(sep + 2);
}

/**
 * Decodes base-62 groups of `widths` characters from `body` into `out`, one after the other
 * as restate-server reads them: a group cut short is a length error, a bad digit a decode
 * error, characters left over a length error.
 */
function unbase62Groups(body: string, widths: readonly number[], out: Uint8Array): void {
  let at = 0;
  let byte = 0;
  for (const width of widths) {
    if (body.length < at + width) throw new IdError('bad length');
    const size = width === U64_WIDTH ? 8 : 16;
    unbase62(body, at, width, out, byte, size);
    at += width;
    byte += size;
  }
  if (at !== body.length) throw new IdError('bad length');
}

// --- invocation ids ----------------------------------------------------------------------------

/** `inv_1` + B62(partition key, 11) + B62(uuid, 22): 38 characters (§14). */
export function invocationIdToString(id: InvocationId): string {
  if (id.uuid.length !== 16) throw new IdError('bad length');
  partitionKeyBytes.writeBigUInt64BE(id.partitionKey);
  return `inv_${SCHEME_VERSION}${base62(partitionKeyBytes, U64_WIDTH)}${base62(id.uuid, U128_WIDTH)}`;
}
const partitionKeyBytes = Buffer.alloc(8);

/** The 24-byte `Start.id` form: partition key (BE u64) ‖ uuid (BE u128) (§7, §14). */
export function invocationIdToBytes(id: InvocationId): Uint8Array {
  if (id.uuid.length !== 16) throw new IdError('bad length');
  const out = Buffer.alloc(INVOCATION_ID_BYTES);
  out.writeBigUInt64BE(id.partitionKey);
  out.set(id.uuid, 8);
  return new Uint8Array(out.buffer, out.byteOffset, INVOCATION_ID_BYTES);
}

export function invocationIdFromBytes(bytes: Uint8Array): InvocationId {
  if (bytes.length !== INVOCATION_ID_BYTES) throw new IdError('bad length');
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return { partitionKey: view.readBigUInt64BE(0), uuid: Uint8Array.from(bytes.subarray(8)) };
}

/**
 * Parses `inv_1…`. Like restate-server: `not-an-id` → bad format, `inv_123` → bad length,
 * `dp_…` → another resource type, `x_…` → an unknown one, characters left over → bad length.
 */
export function parseInvocationId(s: string): InvocationId {
  return invocationIdFromBytes(decodeInvocationId(s));
}

const INVOCATION_ID_GROUPS = [U64_WIDTH, U128_WIDTH] as const;
const decoded = new Uint8Array(INVOCATION_ID_BYTES);
const decodedView = new DataView(decoded.buffer);

/** `inv_1…` in its 24-byte form, checked as `parseInvocationId` checks it; valid until the next call. */
function decodeInvocationId(s: string): Uint8Array {
  unbase62Groups(idBody(s, 'inv'), INVOCATION_ID_GROUPS, decoded);
  return decoded;
}

/**
 * The partition key of `inv_1…` as its high and low 32 bits (errors as `parseInvocationId`):
 * what placing an invocation needs, without the id's objects and BigInts (an invocation id
 * is placed several times per invocation; parsing it whole took 3.5-5 µs).
 */
export function partitionKeyHalvesOf(s: string): [hi: number, lo: number] {
  decodeInvocationId(s);
  return [decodedView.getUint32(0), decodedView.getUint32(4)];
}

/** uuid = 48-bit ms timestamp ‖ 80 random bits, like a ULID, for ordinary invocations (§14). */
export function newInvocationId(partitionKey: bigint): InvocationId {
  const uuid = new Uint8Array(16);
  const now = Date.now();
  for (let i = 5, t = now; i >= 0; i--, t = Math.floor(t / 256)) uuid[i] = t % 256;
  uuid.set(randomBytes(10), 6);
  return { partitionKey, uuid };
}

/**
 * uuid = first 16 bytes of SHA-256 over `parts` joined with ',' — restate-server's scheme for
 * workflow runs (`['wf', service, key]`) and idempotent requests
 * (`['ik', service, key?, handler, idempotencyKey]`, with the scope after the tag when scoped).
 * The Signup/wf1 workflow run in the vectors has exactly this uuid.
 */
export function deterministicInvocationId(partitionKey: bigint, parts: string[]): InvocationId {
  const hash = createHash('sha256');
  parts.forEach((part, i) => hash.update(i === 0 ? part : `,${part}`, 'utf8'));
  return { partitionKey, uuid: new Uint8Array(hash.digest().subarray(0, 16)) };
}

/**
 * Partition key of an object/workflow/idempotency key: the first 8 bytes of SHA-256(key), as a
 * BE u64. Only the key is hashed, so the same key in different services shares a partition (and
 * an id prefix), as in restate-server (reference-behavior.md §1.3). restate-server uses xxh3, so
 * the values differ from its ids; clients treat ids as opaque (§14).
 */
export function partitionKeyOf(key: string): bigint {
  return createHash('sha256').update(key, 'utf8').digest().readBigUInt64BE(0);
}

/**
 * The partition key of an unkeyed invocation made at `now` (ms): `top`, its high 16 bits, picks
 * its partition; its low 48 bits hold `now`, in the bytes that B62 reads as the most significant
 * (it reads the key byte-swapped, §14). So ids made close in time share their leading
 * characters, and a store keyed by partition and id writes a burst's invocations side by side
 * rather than on a page of their own each (B62's digits are not in ASCII order, so the ids are
 * grouped by time, not sorted by it; docs/architecture.md gives the figures). The uuid keeps its
 * 80 random bits, so ids stay unique and unguessable.
 */
export function clockedPartitionKey(top: number, now: number): bigint {
  clockedKey[0] = top >>> 8;
  clockedKey[1] = top & 0xff;
  for (let i = 2, t = now; i < 8; i++, t = Math.floor(t / 256)) clockedKey[i] = t % 256;
  return clockedKey.readBigUInt64BE(0);
}
const clockedKey = Buffer.alloc(8);

/** `clockedPartitionKey` in any partition. */
export function unkeyedPartitionKey(now: number): bigint {
  return clockedPartitionKey(Math.floor(Math.random() * 2 ** 16), now);
}

// --- awakeable ids -----------------------------------------------------------------------------

export type AwakeableTarget =
  /** `sign_1…`: a signal index of the target invocation (SDK ≥ protocol v5). */
  | { kind: 'signal'; invocationId: InvocationId; signalIndex: number }
  /** `prom_1…`: a journal entry index, from v1–v4 journals (§9.6). */
  | { kind: 'entry'; invocationId: InvocationId; entryIndex: number };

const AWAKEABLE_BYTES = INVOCATION_ID_BYTES + 4;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** `sign_1` + base64url-no-padding(Start.id ‖ u32be index): 44 characters (§14). */
export function awakeableIdToString(invocationIdBytes: Uint8Array, signalIndex: number): string {
  if (invocationIdBytes.length !== INVOCATION_ID_BYTES) throw new IdError('bad length');
  const buf = Buffer.alloc(AWAKEABLE_BYTES);
  buf.set(invocationIdBytes);
  buf.writeUInt32BE(signalIndex, INVOCATION_ID_BYTES);
  return `sign_${SCHEME_VERSION}${buf.toString('base64url')}`;
}

/**
 * Parses a signal id (`sign_1…`), else an awakeable id of the older protocols (`prom_1…`).
 * As restate-server does, an id that is no signal id is reported with why it is no `prom_` id
 * either: `sign_1abc` → `id doesn't match the expected type`.
 */
export function parseAwakeableId(s: string): AwakeableTarget {
  try {
    const { invocationId, index } = awakeableBody(s, 'sign');
    return { kind: 'signal', invocationId, signalIndex: index };
  } catch {
    const { invocationId, index } = awakeableBody(s, 'prom');
    return { kind: 'entry', invocationId, entryIndex: index };
  }
}

function awakeableBody(s: string, prefix: 'sign' | 'prom'): { invocationId: InvocationId; index: number } {
  const body = idBody(s, prefix);
  // Node's base64 decoder skips invalid characters, so check the alphabet and the
  // canonical form first.
  if (!BASE64URL.test(body)) throw new IdError('base62 decode error');
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.length !== AWAKEABLE_BYTES) throw new IdError('bad length');
  if (bytes.toString('base64url') !== body) throw new IdError('base62 decode error');
  return {
    invocationId: invocationIdFromBytes(bytes.subarray(0, INVOCATION_ID_BYTES)),
    index: bytes.readUInt32BE(INVOCATION_ID_BYTES),
  };
}

// --- deployment ids ----------------------------------------------------------------------------

const DEPLOYMENT_ID_BYTES = 16;

/** `dp_1` + B62(16 random bytes, 22): 26 characters, like `dp_15mkDZVNLJ7axAH3QeEdtQt`. */
export function newDeploymentId(): string {
  return deploymentIdToString(randomBytes(DEPLOYMENT_ID_BYTES));
}

export function deploymentIdToString(bytes: Uint8Array): string {
  if (bytes.length !== DEPLOYMENT_ID_BYTES) throw new IdError('bad length');
  return `dp_${SCHEME_VERSION}${base62(bytes, U128_WIDTH)}`;
}

/**
 * Returns the 16 id bytes. `garbage` → bad format, `dp_nope` → unrecognized codec version,
 * a wrong body length → bad length (reference-behavior.md §3.3), `inv_1…` → another
 * resource type.
 */
export function parseDeploymentId(s: string): Uint8Array {
  return parseU128Id(s, 'dp');
}

/** Ids of one u128 in 22 base-62 digits (`dp_1…`, `sub_1…`): the 16 bytes, read digit group first. */
export function parseU128Id(s: string, prefix: 'dp' | 'sub'): Uint8Array {
  const bytes = new Uint8Array(DEPLOYMENT_ID_BYTES);
  unbase62Groups(idBody(s, prefix), [U128_WIDTH], bytes);
  return bytes;
}

/**
 * Checks a virtual queue's id (`vq_1` + partition key + u128, 11 + 22 digits). Unlike the
 * other ids, restate-server checks its whole length before any digit.
 */
export function checkVqueueIdForm(s: string): void {
  const body = idBody(s, 'vq');
  if (body.length !== U64_WIDTH + U128_WIDTH) throw new IdError('bad length');
  unbase62Groups(body, [U64_WIDTH, U128_WIDTH], new Uint8Array(INVOCATION_ID_BYTES));
}
