/**
 * The JSON *target body* of `POST /restate/lookup|attach|output` (reference-behavior.md §2.7):
 *
 *   {"target":"workflow","workflowName","workflowKey","scope"?}
 *   {"target":"idempotentInvocation","service","key"?,"handler","idempotencyKey","scope"?}
 *   {"target":"invocation","invocationId"}
 *
 * Restate reads it with serde_json into an internally tagged enum, and a bad body's answer
 * carries serde's error text verbatim ("missing field `target` at line 1 column 2"). So this is
 * a small streaming JSON reader that fails where serde_json fails, with its message and its
 * position: syntax errors and errors about the tag carry `at line L column C` (C counts the
 * bytes consumed on the line), errors about the variant's fields (read from a buffered copy)
 * carry none. Unknown fields are ignored; `null` counts as absent for the optional ones.
 */

export type TargetBody =
  | { target: 'workflow'; workflowName: string; workflowKey: string; scope?: string }
  | { target: 'idempotentInvocation'; service: string; key?: string; handler: string; idempotencyKey: string; scope?: string }
  | { target: 'invocation'; invocationId: string };

/** A serde_json error: its message, with the position when serde_json knows one. */
export class SerdeError extends Error {
  constructor(
    readonly reason: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(line === undefined ? reason : `${reason} at line ${line} column ${column}`);
    this.name = 'SerdeError';
  }
}

/** The Rust enum behind the body, whose name serde puts in some messages. */
const ENUM = 'InvocationTargetRequest';
const TAG = 'target';

interface Field {
  name: string;
  optional: boolean;
}

/** Each variant's fields in declaration order (it decides which missing field is reported). */
const VARIANTS: Record<TargetBody['target'], { rust: string; fields: Field[] }> = {
  workflow: {
    rust: 'Workflow',
    fields: [
      { name: 'scope', optional: true },
      { name: 'workflowName', optional: false },
      { name: 'workflowKey', optional: false },
    ],
  },
  idempotentInvocation: {
    rust: 'IdempotentInvocation',
    fields: [
      { name: 'scope', optional: true },
      { name: 'service', optional: false },
      { name: 'key', optional: true },
      { name: 'handler', optional: false },
      { name: 'idempotencyKey', optional: false },
    ],
  },
  invocation: { rust: 'Invocation', fields: [{ name: 'invocationId', optional: false }] },
};
const VARIANT_NAMES = Object.keys(VARIANTS) as Array<TargetBody['target']>;

/** A buffered JSON value (serde's `Content`), kept only as far as the fields need it. */
type Content = { str: string } | { null: true } | { unexpected: string };

/** serde_json's recursion limit. */
const MAX_DEPTH = 128;

const enum Ch {
  Tab = 0x09,
  Lf = 0x0a,
  Cr = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Comma = 0x2c,
  Minus = 0x2d,
  Dot = 0x2e,
  Zero = 0x30,
  Nine = 0x39,
  Colon = 0x3a,
  LBracket = 0x5b,
  Backslash = 0x5c,
  RBracket = 0x5d,
  LBrace = 0x7b,
  RBrace = 0x7d,
}

const isDigit = (c: number | undefined) => c !== undefined && c >= Ch.Zero && c <= Ch.Nine;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`: the byte each stands for. */
const SIMPLE_ESCAPES: Record<number, number> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 0x08, 0x66: 0x0c, 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09 };

/** `one of`, as serde's `OneOf` lists expected names. */
function oneOf(names: string[]): string {
  const quoted = names.map((n) => `\`${n}\``);
  if (quoted.length === 1) return quoted[0]!;
  if (quoted.length === 2) return `${quoted[0]} or ${quoted[1]}`;
  return `one of ${quoted.join(', ')}`;
}

/** A float as serde_json's `JsonUnexpected` prints it (ryu's shortest form). */
export function formatFloat(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mantissa, exp] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const length = digits.length;
  const kk = Number(exp) + 1; // the decimal point sits after `kk` digits
  const k = kk - length;
  let text: string;
  if (k >= 0 && kk <= 16) text = `${digits}${'0'.repeat(k)}.0`;
  else if (kk > 0 && kk <= 16) text = `${digits.slice(0, kk)}.${digits.slice(kk)}`;
  else if (kk > -5 && kk <= 0) text = `0.${'0'.repeat(-kk)}${digits}`;
  else if (length === 1) text = `${digits}e${kk - 1}`;
  else text = `${digits[0]}.${digits.slice(1)}e${kk - 1}`;
  return sign + text;
}

class Reader {
  private i = 0;
  private depth = MAX_DEPTH;

  constructor(private readonly b: Uint8Array) {}

  /** The position after the bytes consumed so far (serde_json's `error`). */
  error(reason: string): SerdeError {
    return this.at(this.i, reason);
  }

  /** The position of the byte looked at (serde_json's `peek_error`). */
  peekError(reason: string): SerdeError {
    return this.at(Math.min(this.i + 1, this.b.length), reason);
  }

  private at(index: number, reason: string): SerdeError {
    let line = 1;
    let column = 0;
    for (let j = 0; j < index; j++) {
      if (this.b[j] === Ch.Lf) {
        line++;
        column = 0;
      } else {
        column++;
      }
    }
    return new SerdeError(reason, line, column);
  }

  private peek(): number | undefined {
    return this.b[this.i];
  }

  private skipWhitespace(): number | undefined {
    for (;;) {
      const c = this.b[this.i];
      if (c === Ch.Space || c === Ch.Lf || c === Ch.Tab || c === Ch.Cr) this.i++;
      else return c;
    }
  }

  private enter(): void {
    if (--this.depth === 0) throw this.peekError('recursion limit exceeded');
  }

  private leave(): void {
    this.depth++;
  }

  /** The whole body: the tagged enum, then nothing but whitespace. */
  document(): TargetBody {
    const c = this.skipWhitespace();
    if (c === undefined) throw this.peekError('EOF while parsing a value');
    let body: TargetBody;
    if (c === Ch.LBrace) body = this.taggedMap();
    else if (c === Ch.LBracket) body = this.taggedSeq();
    else {
      const unexpected = this.scalar();
      throw this.error(`invalid type: ${unexpected}, expected internally tagged enum ${ENUM}`);
    }
    if (this.skipWhitespace() !== undefined) throw this.peekError('trailing characters');
    return body;
  }

  /** `{...}` at the top: the tag is read as it comes, every other entry is buffered. */
  private taggedMap(): TargetBody {
    this.enter();
    this.i++;
    let tag: TargetBody['target'] | undefined;
    const entries: Array<[string, Content]> = [];
    for (let first = true; this.hasNextKey(first); first = false) {
      this.i++;
      const key = this.string();
      if (key === TAG) {
        // serde reports this one after trying to close the map, which moves the position.
        if (tag !== undefined) throw this.afterEndMap(`duplicate field \`${TAG}\``);
        this.colon();
        tag = this.variant();
      } else {
        this.colon();
        entries.push([key, this.value()]);
      }
    }
    this.i++;
    this.leave();
    if (tag === undefined) throw this.error(`missing field \`${TAG}\``);
    return fromMap(tag, entries);
  }

  /** `[tag, field...]`: serde also accepts an internally tagged enum as a sequence. */
  private taggedSeq(): TargetBody {
    this.enter();
    this.i++;
    let tag: TargetBody['target'] | undefined;
    const elements: Content[] = [];
    while (this.hasNextElement(tag === undefined)) {
      if (tag === undefined) tag = this.variant();
      else elements.push(this.value());
    }
    if (tag === undefined) {
      // `[]`: closed first, then reported.
      this.i++;
      this.leave();
      throw this.error(`missing field \`${TAG}\``);
    }
    this.i++;
    this.leave();
    return fromSeq(tag, elements);
  }

  /** serde_json's `has_next_key`: true when the next key's opening quote is next (not read yet). */
  private hasNextKey(first: boolean): boolean {
    let c = this.skipWhitespace();
    if (c === Ch.RBrace) return false;
    if (c === Ch.Comma && !first) {
      this.i++;
      c = this.skipWhitespace();
    } else if (c === undefined) {
      throw this.peekError('EOF while parsing an object');
    } else if (!first) {
      throw this.peekError('expected `,` or `}`');
    }
    if (c === Ch.RBrace) throw this.peekError('trailing comma');
    if (c === undefined) throw this.peekError('EOF while parsing a value');
    if (c !== Ch.Quote) throw this.peekError('key must be a string');
    return true;
  }

  /** serde_json's `has_next_element`: true when an element starts next (not read yet). */
  private hasNextElement(first: boolean): boolean {
    let c = this.skipWhitespace();
    if (c === Ch.RBracket) return false;
    if (c === Ch.Comma && !first) {
      this.i++;
      c = this.skipWhitespace();
    } else if (c === undefined) {
      throw this.peekError('EOF while parsing a list');
    } else if (!first) {
      throw this.peekError('expected `,` or `]`');
    }
    if (c === Ch.RBracket) throw this.peekError('trailing comma');
    if (c === undefined) throw this.peekError('EOF while parsing a value');
    return true;
  }

  /** An error raised inside the top map, positioned after serde_json's `end_map` ran. */
  private afterEndMap(reason: string): SerdeError {
    if (this.skipWhitespace() === Ch.RBrace) this.i++;
    return this.error(reason);
  }

  private colon(): void {
    const c = this.skipWhitespace();
    if (c === Ch.Colon) this.i++;
    else if (c === undefined) throw this.peekError('EOF while parsing an object');
    else throw this.peekError('expected `:`');
  }

  /** The tag's value: a variant name, read as serde_json's `deserialize_identifier`. */
  private variant(): TargetBody['target'] {
    const c = this.skipWhitespace();
    if (c === undefined) throw this.peekError('EOF while parsing a value');
    if (c === Ch.Quote) {
      this.i++;
      const name = this.string();
      if ((VARIANT_NAMES as string[]).includes(name)) return name as TargetBody['target'];
      throw this.error(`unknown variant \`${name}\`, expected ${oneOf(VARIANT_NAMES)}`);
    }
    const unexpected = this.scalar();
    throw this.error(`invalid type: ${unexpected}, expected variant identifier`);
  }

  /**
   * A scalar where serde wanted something else: what serde calls it, after reading it. `[` and
   * `{` are named without being read (serde_json's `peek_invalid_type`).
   */
  private scalar(): string {
    const c = this.peek()!;
    switch (c) {
      case 0x6e: // n
        this.i++;
        this.ident('ull');
        return 'null';
      case 0x74: // t
        this.i++;
        this.ident('rue');
        return 'boolean `true`';
      case 0x66: // f
        this.i++;
        this.ident('alse');
        return 'boolean `false`';
      case Ch.Minus:
        this.i++;
        return this.number(false);
      case Ch.Quote: {
        this.i++;
        return `string ${JSON.stringify(this.string())}`;
      }
      case Ch.LBracket:
        return 'sequence';
      case Ch.LBrace:
        return 'map';
      default:
        if (isDigit(c)) return this.number(true);
        throw this.peekError('expected value');
    }
  }

  /** Any JSON value (serde's `Content`): strings and null are kept, the rest only described. */
  private value(): Content {
    const c = this.skipWhitespace();
    if (c === undefined) throw this.peekError('EOF while parsing a value');
    if (c === Ch.Quote) {
      this.i++;
      return { str: this.string() };
    }
    if (c === Ch.LBracket) {
      this.enter();
      this.i++;
      for (let first = true; this.hasNextElement(first); first = false) this.value();
      this.i++;
      this.leave();
      return { unexpected: 'sequence' };
    }
    if (c === Ch.LBrace) {
      this.enter();
      this.i++;
      for (let first = true; this.hasNextKey(first); first = false) {
        this.i++;
        this.string();
        this.colon();
        this.value();
      }
      this.i++;
      this.leave();
      return { unexpected: 'map' };
    }
    const unexpected = this.scalar();
    return unexpected === 'null' ? { null: true } : { unexpected };
  }

  private ident(rest: string): void {
    for (let j = 0; j < rest.length; j++) {
      const c = this.b[this.i];
      if (c === undefined) throw this.error('EOF while parsing a value');
      this.i++;
      if (c !== rest.charCodeAt(j)) throw this.error('expected ident');
    }
  }

  /** A number after its sign: described as serde_json would parse it (u64, i64 or f64). */
  private number(positive: boolean): string {
    const start = this.i;
    const first = this.b[this.i];
    if (first === undefined) throw this.error('EOF while parsing a value');
    this.i++;
    if (first === Ch.Zero) {
      if (isDigit(this.peek())) throw this.peekError('invalid number');
    } else if (isDigit(first)) {
      while (isDigit(this.peek())) this.i++;
    } else {
      throw this.error('invalid number');
    }
    let float = false;
    if (this.peek() === Ch.Dot) {
      float = true;
      this.i++;
      const d = this.peek();
      if (d === undefined) throw this.peekError('EOF while parsing a value');
      if (!isDigit(d)) throw this.peekError('invalid number');
      while (isDigit(this.peek())) this.i++;
    }
    const e = this.peek();
    if (e === 0x65 || e === 0x45) {
      float = true;
      this.i++;
      const s = this.peek();
      if (s === 0x2b || s === Ch.Minus) this.i++;
      const d = this.b[this.i];
      if (d === undefined) throw this.error('EOF while parsing a value');
      this.i++;
      if (!isDigit(d)) throw this.error('invalid number');
      while (isDigit(this.peek())) this.i++;
    }
    const text = Buffer.from(this.b.subarray(start, this.i)).toString('latin1');
    if (!float) {
      const n = BigInt(text);
      if (positive && n <= 0xffffffffffffffffn) return `integer \`${n}\``;
      if (!positive && n !== 0n && n <= 0x8000000000000000n) return `integer \`-${n}\``;
    }
    const x = Number(text) * (positive ? 1 : -1);
    if (!Number.isFinite(x)) throw this.error('number out of range');
    return `floating point \`${formatFloat(x)}\``;
  }

  /** A string after its opening quote; runs without escapes are sliced, not copied byte by byte. */
  private string(): string {
    const parts: Uint8Array[] = [];
    let start = this.i;
    for (;;) {
      const c = this.b[this.i];
      if (c === undefined) throw this.error('EOF while parsing a string');
      if (c === Ch.Quote) {
        parts.push(this.b.subarray(start, this.i));
        this.i++;
        break;
      }
      if (c === Ch.Backslash) {
        parts.push(this.b.subarray(start, this.i));
        this.i++;
        parts.push(this.escape());
        start = this.i;
        continue;
      }
      this.i++;
      if (c < 0x20) throw this.error('control character (\\u0000-\\u001F) found while parsing a string');
    }
    try {
      return utf8.decode(parts.length === 1 ? parts[0] : Buffer.concat(parts));
    } catch {
      throw this.error('invalid unicode code point');
    }
  }

  /** The bytes an escape stands for, after its backslash. */
  private escape(): Uint8Array {
    const c = this.b[this.i];
    if (c === undefined) throw this.error('EOF while parsing a string');
    this.i++;
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined) return Uint8Array.of(simple);
    if (c !== 0x75) throw this.error('invalid escape');
    let code = this.hex4();
    if (code >= 0xdc00 && code <= 0xdfff) throw this.error('lone leading surrogate in hex escape');
    if (code >= 0xd800 && code <= 0xdbff) {
      for (const expected of [Ch.Backslash, 0x75]) {
        const n = this.b[this.i];
        if (n === undefined) throw this.error('EOF while parsing a string');
        this.i++;
        if (n !== expected) throw this.error('unexpected end of hex escape');
      }
      const low = this.hex4();
      if (low < 0xdc00 || low > 0xdfff) throw this.error('lone leading surrogate in hex escape');
      code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
    }
    return Buffer.from(String.fromCodePoint(code), 'utf8');
  }

  private hex4(): number {
    if (this.b.length - this.i < 4) {
      this.i = this.b.length;
      throw this.error('EOF while parsing a string');
    }
    const text = Buffer.from(this.b.subarray(this.i, this.i + 4)).toString('latin1');
    this.i += 4;
    if (!/^[0-9a-fA-F]{4}$/.test(text)) throw this.error('invalid escape');
    return parseInt(text, 16);
  }
}

/** A field's value as `ReString` / `Option<ReString>` reads it from the buffered content. */
function fieldString(value: Content, optional: boolean): string | undefined {
  if ('str' in value) return value.str;
  if ('null' in value) {
    if (optional) return undefined;
    throw new SerdeError('invalid type: null, expected a string');
  }
  throw new SerdeError(`invalid type: ${value.unexpected}, expected a string`);
}

function build(tag: TargetBody['target'], values: Map<string, string | undefined>): TargetBody {
  const fields: Record<string, string> = {};
  for (const [k, v] of values) if (v !== undefined) fields[k] = v;
  return { target: tag, ...fields } as TargetBody;
}

/** The variant's struct from the map's other entries, in their order, as serde's derive does. */
function fromMap(tag: TargetBody['target'], entries: Array<[string, Content]>): TargetBody {
  const { fields } = VARIANTS[tag];
  const seen = new Map<string, string | undefined>();
  for (const [key, value] of entries) {
    const field = fields.find((f) => f.name === key);
    if (!field) continue;
    if (seen.has(key)) throw new SerdeError(`duplicate field \`${key}\``);
    seen.set(key, fieldString(value, field.optional));
  }
  for (const f of fields) if (!f.optional && !seen.has(f.name)) throw new SerdeError(`missing field \`${f.name}\``);
  return build(tag, seen);
}

/** The variant's struct from the elements after the tag, field by field in declaration order. */
function fromSeq(tag: TargetBody['target'], elements: Content[]): TargetBody {
  const { rust, fields } = VARIANTS[tag];
  const n = fields.length;
  const values = new Map<string, string | undefined>();
  fields.forEach((f, i) => {
    const element = elements[i];
    if (element === undefined) {
      if (f.optional) return;
      throw new SerdeError(`invalid length ${i}, expected struct variant ${ENUM}::${rust} with ${n} element${n === 1 ? '' : 's'}`);
    }
    values.set(f.name, fieldString(element, f.optional));
  });
  if (elements.length > n) throw new SerdeError(`invalid length ${elements.length}, expected ${n} element${n === 1 ? '' : 's'} in sequence`);
  return build(tag, values);
}

/** Reads a target body, or throws the `SerdeError` serde_json would give for it. */
export function parseTargetBody(bytes: Uint8Array): TargetBody {
  return new Reader(bytes).document();
}
