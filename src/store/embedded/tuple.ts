/**
 * Binary keys for the embedded store: a tuple of strings and numbers encoded so that bytewise
 * order is tuple order and no tuple is a byte prefix of another unless it is a tuple prefix.
 *
 * lmdb's own array keys are not used: they separate elements with a 0x00 byte and leave 0x00
 * inside long strings unescaped, so ['a\0b…'] and ['a', 'b…'] could meet. Object keys and
 * state keys are user data and may contain anything.
 *
 *   string: 0x02, UTF-8 with every 0x00 written as 0x00 0xFF, then 0x00
 *   number: 0x15, IEEE-754 big-endian, sign bit flipped (all bits for negatives)
 */
export type KeyPart = string | number;

const STRING = 0x02;
const NUMBER = 0x15;
/** Greater than every type byte, so `prefix + 0xFF` bounds all tuples under `prefix`. */
const AFTER = 0xff;
/** LMDB's default maximum key size (lmdb-js DEFAULT_MAX_KEY_SIZE). */
export const MAX_KEY_BYTES = 1978;

export function tupleKey(...parts: KeyPart[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if (typeof part === 'string') {
      chunks.push(Buffer.of(STRING), escapeZeros(Buffer.from(part, 'utf8')), Buffer.of(0));
    } else {
      chunks.push(Buffer.of(NUMBER), orderedFloat(part));
    }
  }
  const key = Buffer.concat(chunks);
  if (key.length > MAX_KEY_BYTES) {
    throw new RangeError(`key too long for the embedded store (${key.length} > ${MAX_KEY_BYTES} bytes): ${JSON.stringify(parts).slice(0, 200)}`);
  }
  return key;
}

/** Bounds for a range scan over every key that extends the tuple `parts`. */
export function prefixRange(...parts: KeyPart[]): { start: Buffer; end: Buffer } {
  const start = tupleKey(...parts);
  return { start, end: Buffer.concat([start, Buffer.of(AFTER)]) };
}

export function decodeTuple(key: Uint8Array): KeyPart[] {
  const parts: KeyPart[] = [];
  let at = 0;
  while (at < key.length) {
    const type = key[at++];
    if (type === NUMBER) {
      parts.push(readOrderedFloat(key.subarray(at, at + 8)));
      at += 8;
    } else if (type === STRING) {
      const bytes: number[] = [];
      for (;;) {
        if (at >= key.length) throw new Error('corrupt key: unterminated string');
        const b = key[at++]!;
        if (b !== 0) bytes.push(b);
        else if (key[at] === 0xff) {
          bytes.push(0);
          at++;
        } else break;
      }
      parts.push(Buffer.from(bytes).toString('utf8'));
    } else {
      throw new Error(`corrupt key: type byte ${type}`);
    }
  }
  return parts;
}

function escapeZeros(bytes: Buffer): Buffer {
  if (!bytes.includes(0)) return bytes;
  const out: number[] = [];
  for (const b of bytes) {
    out.push(b);
    if (b === 0) out.push(0xff);
  }
  return Buffer.from(out);
}

function orderedFloat(n: number): Buffer {
  if (Number.isNaN(n)) throw new RangeError('NaN cannot be part of a key');
  const out = Buffer.alloc(8);
  out.writeDoubleBE(n === 0 ? 0 : n);
  if (out[0]! & 0x80) for (let i = 0; i < 8; i++) out[i] = ~out[i]! & 0xff;
  else out[0] = out[0]! | 0x80;
  return out;
}

function readOrderedFloat(bytes: Uint8Array): number {
  if (bytes.length !== 8) throw new Error('corrupt key: truncated number');
  const copy = Buffer.from(bytes);
  if (copy[0]! & 0x80) copy[0] = copy[0]! & 0x7f;
  else for (let i = 0; i < 8; i++) copy[i] = ~copy[i]! & 0xff;
  return copy.readDoubleBE(0);
}
