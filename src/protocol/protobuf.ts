/**
 * A minimal proto3 wire reader/writer plus a small schema-driven message codec.
 *
 * Only what the service protocol needs (service-protocol.md §5, §6): varints (uint32, uint64 as
 * `number` or `bigint`, bool, enums), length-delimited fields (string, bytes, sub-messages,
 * packed repeated varints), and skipping of anything unknown, including fixed32/fixed64 and
 * groups, because the protocol says unknown fields must be ignored (§5).
 *
 * Decoded `bytes` are zero-copy views into the payload they were read from: do not reuse the
 * payload's memory while decoded messages are alive.
 */

export class ProtoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtoError';
  }
}

export const WireType = { Varint: 0, I64: 1, Len: 2, StartGroup: 3, EndGroup: 4, I32: 5 } as const;

const EMPTY = new Uint8Array(0);
const TWO_POW_32 = 2 ** 32;
const MAX_DEPTH = 1000;

/** Writes into one growing Buffer; `finish()` copies out exactly the bytes written. */
export class ProtoWriter {
  private buf: Buffer;
  pos = 0;

  constructor(initialSize = 256) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** Starts a new message; drops an oversized buffer so one huge message does not pin memory. */
  reset(): void {
    this.pos = 0;
    if (this.buf.length > 1 << 20) this.buf = Buffer.allocUnsafe(256);
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.pos);
    out.set(this.buf.subarray(0, this.pos));
    return out;
  }

  private need(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  tag(fieldNo: number, wireType: number): void {
    this.uint32(((fieldNo << 3) | wireType) >>> 0);
  }

  uint32(value: number): void {
    this.need(5);
    const b = this.buf;
    let v = value >>> 0;
    while (v > 0x7f) {
      b[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[this.pos++] = v;
  }

  /** uint64 from a JS number; exact up to 2^53, which covers epoch-ms times and durations. */
  uint64(value: number): void {
    if (value < TWO_POW_32 && value >= 0) return this.uint32(value);
    if (!(value >= 0) || !Number.isFinite(value)) throw new ProtoError(`bad uint64 ${value}`);
    this.need(10);
    let v = Math.floor(value);
    while (v > 0x7f) {
      this.buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }

  uint64big(value: bigint): void {
    if (value < 0n || value >= 1n << 64n) throw new ProtoError(`bad uint64 ${value}`);
    this.need(10);
    let v = value;
    while (v > 0x7fn) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  bytes(value: Uint8Array): void {
    this.uint32(value.length);
    this.need(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  string(value: string): void {
    // Fast path for short ASCII (names, keys, ids): one length byte, no byteLength pass.
    const n = value.length;
    if (n < 0x80) {
      this.need(n + 1);
      const b = this.buf;
      let p = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        b[p++] = c;
      }
      if (i === n) {
        b[this.pos] = n;
        this.pos = p;
        return;
      }
    }
    const len = Buffer.byteLength(value, 'utf8');
    this.uint32(len);
    this.need(len);
    this.pos += this.buf.write(value, this.pos, len, 'utf8');
  }

  /** Reserves one length byte for a nested message; pair with `endLength`. */
  beginLength(): number {
    this.need(1);
    return this.pos++;
  }

  /** Fills the reserved length, shifting the body when the length needs more than one byte. */
  endLength(start: number): void {
    const len = this.pos - start - 1;
    if (len < 0x80) {
      this.buf[start] = len;
      return;
    }
    let size = 1;
    for (let v = len; v > 0x7f; v >>>= 7) size++;
    this.need(size - 1);
    this.buf.copyWithin(start + size, start + 1, this.pos);
    const end = this.pos + size - 1;
    this.pos = start;
    this.uint32(len);
    this.pos = end;
  }
}

/** Reads one message; nested messages narrow `end` instead of allocating a new reader. */
export class ProtoReader {
  pos = 0;
  end: number;
  private readonly u8: Uint8Array;
  private text: Buffer | undefined;
  private depth = 0;

  constructor(data: Uint8Array) {
    this.u8 = data;
    this.end = data.length;
  }

  private truncated(): never {
    throw new ProtoError('truncated message');
  }

  uint32(): number {
    const b = this.u8;
    let p = this.pos;
    if (p >= this.end) this.truncated();
    let c = b[p++]!;
    if (c < 0x80) {
      this.pos = p;
      return c;
    }
    let x = c & 0x7f;
    // Encoders may sign-extend to 10 bytes; a uint32 keeps only the low 32 bits.
    for (let shift = 7; ; shift += 7) {
      if (shift > 63) throw new ProtoError('varint too long');
      if (p >= this.end) this.truncated();
      c = b[p++]!;
      if (shift < 32) x |= (c & 0x7f) << shift;
      if (c < 0x80) break;
    }
    this.pos = p;
    return x >>> 0;
  }

  /** uint64 as a number: exact below 2^53 (times, durations, ms delays). */
  uint64(): number {
    const b = this.u8;
    let p = this.pos;
    let result = 0;
    let mul = 1;
    for (let i = 0; ; i++) {
      if (i === 10) throw new ProtoError('varint too long');
      if (p >= this.end) this.truncated();
      const c = b[p++]!;
      result += (c & 0x7f) * mul;
      if (c < 0x80) break;
      mul *= 128;
    }
    this.pos = p;
    return result;
  }

  uint64big(): bigint {
    const b = this.u8;
    let p = this.pos;
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (shift > 63n) throw new ProtoError('varint too long');
      if (p >= this.end) this.truncated();
      const c = b[p++]!;
      result |= BigInt(c & 0x7f) << shift;
      if (c < 0x80) break;
    }
    this.pos = p;
    return result & 0xffff_ffff_ffff_ffffn;
  }

  /** Reads a length prefix and checks that the body fits in the current message. */
  length(): number {
    const len = this.uint32();
    if (len > this.end - this.pos) this.truncated();
    return len;
  }

  bytes(): Uint8Array {
    const len = this.length();
    const start = this.pos;
    this.pos += len;
    return len === 0 ? EMPTY : new Uint8Array(this.u8.buffer, this.u8.byteOffset + start, len);
  }

  string(): string {
    const len = this.length();
    const start = this.pos;
    this.pos += len;
    if (len <= 32) {
      // Short ASCII is the common case and cheaper than a Buffer round trip.
      const b = this.u8;
      let s = '';
      for (let i = start; i < start + len; i++) {
        const c = b[i]!;
        if (c >= 0x80) return this.utf8(start, len);
        s += String.fromCharCode(c);
      }
      return s;
    }
    return this.utf8(start, len);
  }

  private utf8(start: number, len: number): string {
    this.text ??= Buffer.from(this.u8.buffer, this.u8.byteOffset, this.u8.byteLength);
    return this.text.toString('utf8', start, start + len);
  }

  /**
   * Enters a length-delimited sub-message; returns the outer end to hand to `leave`. Nesting is
   * capped like restate-server caps Future trees (§11), so hostile input cannot blow the stack.
   */
  enter(): number {
    const len = this.length();
    if (++this.depth > MAX_DEPTH) throw new ProtoError('message nested too deeply');
    const outer = this.end;
    this.end = this.pos + len;
    return outer;
  }

  leave(outer: number): void {
    this.depth--;
    this.pos = this.end;
    this.end = outer;
  }

  skip(wireType: number): void {
    switch (wireType) {
      case WireType.Varint:
        this.uint64();
        return;
      case WireType.I64:
        return this.advance(8);
      case WireType.Len:
        return this.advance(this.length());
      case WireType.I32:
        return this.advance(4);
      case WireType.StartGroup:
        for (;;) {
          const tag = this.uint32();
          if ((tag & 7) === WireType.EndGroup) return;
          this.skip(tag & 7);
        }
      default:
        throw new ProtoError(`unexpected wire type ${wireType}`);
    }
  }

  private advance(n: number): void {
    if (n > this.end - this.pos) this.truncated();
    this.pos += n;
  }
}

// --- Schema-driven codec --------------------------------------------------------------------

/**
 * Field kinds. Besides proto scalars there are three wrapper shapes the protocol uses a lot:
 * `wrappedBytes` is a message whose field 1 is bytes, exposed as those bytes (Restate's `Value`);
 * `empty` is an empty message, exposed as `true` (`Void`); `wrappedBytesList` is a message whose
 * repeated field 1 is bytes, exposed as the list (`StateKeys`).
 */
export type ScalarKind =
  'uint32' | 'uint64' | 'uint64big' | 'bool' | 'string' | 'bytes' | 'wrappedBytes' | 'empty' | 'wrappedBytesList';

/**
 * - `implicit`: proto3 field without presence; always set after decoding, skipped when default.
 * - `optional`: explicit presence (`optional` or a oneof member); set only when on the wire,
 *   written whenever defined, even if zero or empty.
 * - `always`: a sub-message field the peer always writes; set after decoding, always written.
 * - `repeated`: always an array after decoding; varint kinds are written packed.
 * - `repeatedOptional`: like `repeated`, but the property is left out when there are no items.
 */
export type FieldMode = 'implicit' | 'optional' | 'always' | 'repeated' | 'repeatedOptional';

export type FieldKind = ScalarKind | MessageSchema<unknown> | (() => MessageSchema<unknown>);

/** `[fieldNumber, kind, mode?, alternativeFieldNumbers?]` */
export type FieldSpec = readonly [no: number, kind: FieldKind, mode?: FieldMode, alt?: readonly number[]];

export type SchemaFields<T> = { readonly [K in keyof T]-?: FieldSpec };

/** How one kind goes over the wire; sub-messages get one of these from their schema. */
interface KindCodec {
  readonly wire: number;
  /** The decoded value when the field is absent (implicit and always modes). */
  zero(): unknown;
  read(r: ProtoReader): unknown;
  write(w: ProtoWriter, v: unknown): void;
}

/** Reads a wrapper message, handing over every field-1 bytes value and skipping the rest. */
function readWrapped(r: ProtoReader, onBytes: (b: Uint8Array) => void): void {
  const outer = r.enter();
  while (r.pos < r.end) {
    const tag = r.uint32();
    if (tag === ((1 << 3) | WireType.Len)) onBytes(r.bytes());
    else r.skip(tag & 7);
  }
  r.leave(outer);
}

function writeWrapped(w: ProtoWriter, items: readonly Uint8Array[]): void {
  const start = w.beginLength();
  for (const item of items) {
    w.tag(1, WireType.Len);
    w.bytes(item);
  }
  w.endLength(start);
}

const SCALARS: Record<ScalarKind, KindCodec> = {
  uint32: { wire: 0, zero: () => 0, read: (r) => r.uint32(), write: (w, v) => w.uint32(v as number) },
  uint64: { wire: 0, zero: () => 0, read: (r) => r.uint64(), write: (w, v) => w.uint64(v as number) },
  uint64big: { wire: 0, zero: () => 0n, read: (r) => r.uint64big(), write: (w, v) => w.uint64big(v as bigint) },
  bool: { wire: 0, zero: () => false, read: (r) => r.uint64() !== 0, write: (w, v) => w.uint32(v ? 1 : 0) },
  string: { wire: 2, zero: () => '', read: (r) => r.string(), write: (w, v) => w.string(v as string) },
  bytes: { wire: 2, zero: () => EMPTY, read: (r) => r.bytes(), write: (w, v) => w.bytes(v as Uint8Array) },
  empty: { wire: 2, zero: () => true, read: (r) => (r.skip(WireType.Len), true), write: (w) => w.uint32(0) },
  wrappedBytes: {
    wire: 2,
    zero: () => EMPTY,
    read: (r) => {
      let content: Uint8Array = EMPTY;
      readWrapped(r, (b) => (content = b));
      return content;
    },
    // An empty Value is written as an empty message, as restate-server does (`7200`).
    write: (w, v) => writeWrapped(w, (v as Uint8Array).length > 0 ? [v as Uint8Array] : []),
  },
  wrappedBytesList: {
    wire: 2,
    zero: () => [],
    read: (r) => {
      const list: Uint8Array[] = [];
      readWrapped(r, (b) => list.push(b));
      return list;
    },
    write: (w, v) => writeWrapped(w, v as Uint8Array[]),
  },
};

/** proto3 default values, which fields without presence leave off the wire. */
function isDefault(v: unknown): boolean {
  return v === 0 || v === '' || v === false || v === 0n || (v instanceof Uint8Array && v.length === 0);
}

interface Field {
  readonly name: string;
  readonly no: number;
  readonly kind: FieldKind;
  readonly mode: FieldMode;
  readonly repeated: boolean;
  /** Resolved on first use, so a schema may refer to itself (Future.nested_futures). */
  codec?: KindCodec;
}

export class MessageSchema<T> {
  /** Phantom: ties the schema to the TS type it decodes to. */
  declare readonly type?: T;
  private readonly fields: Field[] = [];
  private readonly byNo: (Field | undefined)[] = [];
  private asKind: KindCodec | undefined;

  constructor(spec: SchemaFields<T>) {
    for (const [name, [no, kind, mode = 'implicit', alt = []]] of Object.entries<FieldSpec>(spec)) {
      const field: Field = { name, no, kind, mode, repeated: mode === 'repeated' || mode === 'repeatedOptional' };
      this.fields.push(field);
      for (const n of [no, ...alt]) this.byNo[n] = field;
    }
    // Canonical proto encoding writes fields in field-number order.
    this.fields.sort((a, b) => a.no - b.no);
  }

  decode(payload: Uint8Array): T {
    return this.read(new ProtoReader(payload)) as T;
  }

  encode(message: T): Uint8Array {
    scratch.reset();
    this.write(scratch, message as Record<string, unknown>);
    return scratch.finish();
  }

  private read(r: ProtoReader): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const f of this.fields) {
      if (f.mode === 'implicit' || f.mode === 'always') out[f.name] = codecOf(f).zero();
      else if (f.mode === 'repeated') out[f.name] = [];
    }
    while (r.pos < r.end) {
      const tag = r.uint32();
      const wt = tag & 7;
      const f = this.byNo[tag >>> 3];
      if (f === undefined) {
        r.skip(wt);
        continue;
      }
      const c = codecOf(f);
      if (!f.repeated) {
        expectWire(wt, c.wire);
        out[f.name] = c.read(r);
        continue;
      }
      const list = (out[f.name] ??= []) as unknown[];
      if (wt === WireType.Len && c.wire === WireType.Varint) {
        // Packed repeated varints; proto3 parsers must accept both forms.
        const outer = r.enter();
        while (r.pos < r.end) list.push(c.read(r));
        r.leave(outer);
      } else {
        expectWire(wt, c.wire);
        list.push(c.read(r));
      }
    }
    return out;
  }

  private write(w: ProtoWriter, m: Record<string, unknown>): void {
    for (const f of this.fields) {
      const v = m[f.name];
      const c = codecOf(f);
      if (f.repeated) {
        const list = v as unknown[] | undefined;
        if (list === undefined || list.length === 0) continue;
        if (c.wire === WireType.Varint) {
          w.tag(f.no, WireType.Len);
          const start = w.beginLength();
          for (const item of list) c.write(w, item);
          w.endLength(start);
        } else {
          for (const item of list) {
            w.tag(f.no, c.wire);
            c.write(w, item);
          }
        }
      } else if (f.mode === 'always' || (v !== undefined && (f.mode === 'optional' || !isDefault(v)))) {
        w.tag(f.no, c.wire);
        c.write(w, v ?? c.zero() ?? {});
      }
    }
  }

  /** This schema as the kind of a sub-message field. */
  kind(): KindCodec {
    return (this.asKind ??= {
      wire: WireType.Len,
      zero: () => undefined,
      read: (r) => {
        const outer = r.enter();
        const v = this.read(r);
        r.leave(outer);
        return v;
      },
      write: (w, v) => {
        const start = w.beginLength();
        this.write(w, v as Record<string, unknown>);
        w.endLength(start);
      },
    });
  }
}

/** Encoding is synchronous and not re-entrant, so one scratch writer serves every message. */
const scratch = new ProtoWriter(4096);

function codecOf(f: Field): KindCodec {
  if (f.codec !== undefined) return f.codec;
  const kind = typeof f.kind === 'function' ? f.kind() : f.kind;
  return (f.codec = kind instanceof MessageSchema ? kind.kind() : SCALARS[kind]);
}

function expectWire(actual: number, expected: number): void {
  if (actual !== expected) throw new ProtoError(`wire type ${actual}, expected ${expected}`);
}

export function defineSchema<T>(spec: SchemaFields<T>): MessageSchema<T> {
  return new MessageSchema<T>(spec);
}
