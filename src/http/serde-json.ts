/**
 * Reading JSON as Restate's serde_json does, for both ports: the same acceptance, the same
 * error texts, and the same `at line L column C` positions (C counts the bytes consumed on the
 * line; reference-behavior.md §1.2, §2.7). Restate answers a bad body with serde's text
 * verbatim, so a client sees the same message from redstate.
 *
 * `JsonScanner` holds the lexical half (whitespace, strings and their escapes, numbers,
 * literals, separators, nesting depth, positions). The admin API reads a whole document into a
 * positioned tree (`parseJsonTree`) and checks its fields afterwards; the ingress's target body
 * reads its tagged enum as it streams (src/ingress/target-body.ts), because serde reports a bad
 * tag before a later syntax error.
 */

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

/** serde_json's recursion limit. */
const MAX_DEPTH = 128;

export const enum Ch {
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
const SIMPLE_ESCAPES: Record<number, number> = {
  0x22: 0x22,
  0x5c: 0x5c,
  0x2f: 0x2f,
  0x62: 0x08,
  0x66: 0x0c,
  0x6e: 0x0a,
  0x72: 0x0d,
  0x74: 0x09,
};

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

/** A number read from the text: its digits (with the sign), whether it has a fraction or exponent, its value. */
export interface ScannedNumber {
  text: string;
  float: boolean;
  value: number;
}

/** Whether serde_json reads the number as an integer (u64 or i64; `-0` is the float -0.0). */
export function isSerdeInteger(n: ScannedNumber): boolean {
  if (n.float) return false;
  const big = BigInt(n.text);
  if (!n.text.startsWith('-')) return big <= 0xffffffffffffffffn;
  return big !== 0n && big >= -0x8000000000000000n;
}

/** serde's `Unexpected` wording for a number, as serde_json parses it (u64, i64, else f64). */
export function describeNumber(n: ScannedNumber): string {
  return isSerdeInteger(n) ? `integer \`${BigInt(n.text)}\`` : `floating point \`${formatFloat(n.value)}\``;
}

export class JsonScanner {
  /** Bytes consumed. */
  i = 0;
  private depth = MAX_DEPTH;

  constructor(readonly b: Uint8Array) {}

  /** The position after the bytes consumed so far (serde_json's `error`). */
  error(reason: string): SerdeError {
    return this.errorAt(this.i, reason);
  }

  /** The position of the byte looked at (serde_json's `peek_error`). */
  peekError(reason: string): SerdeError {
    return this.errorAt(Math.min(this.i + 1, this.b.length), reason);
  }

  /** An error positioned after `consumed` bytes. */
  errorAt(consumed: number, reason: string): SerdeError {
    const { line, column } = this.position(consumed);
    return new SerdeError(reason, line, column);
  }

  /** Line and column after `consumed` bytes, as serde_json prints them. */
  position(consumed: number): { line: number; column: number } {
    let line = 1;
    let column = 0;
    for (let j = 0; j < consumed && j < this.b.length; j++) {
      if (this.b[j] === Ch.Lf) {
        line++;
        column = 0;
      } else {
        column++;
      }
    }
    return { line, column };
  }

  peek(): number | undefined {
    return this.b[this.i];
  }

  skipWhitespace(): number | undefined {
    for (;;) {
      const c = this.b[this.i];
      if (c === Ch.Space || c === Ch.Lf || c === Ch.Tab || c === Ch.Cr) this.i++;
      else return c;
    }
  }

  /** Only whitespace left; else `trailing characters`. */
  end(): void {
    if (this.skipWhitespace() !== undefined) throw this.peekError('trailing characters');
  }

  /** Into an array or object (before its bracket is consumed). */
  enter(): void {
    if (--this.depth === 0) throw this.peekError('recursion limit exceeded');
  }

  leave(): void {
    this.depth++;
  }

  /** serde_json's `has_next_key`: true when the next key's opening quote is next (not read yet). */
  hasNextKey(first: boolean): boolean {
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
  hasNextElement(first: boolean): boolean {
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

  colon(): void {
    const c = this.skipWhitespace();
    if (c === Ch.Colon) this.i++;
    else if (c === undefined) throw this.peekError('EOF while parsing an object');
    else throw this.peekError('expected `:`');
  }

  /** The rest of `null`, `true` or `false` after its first letter. */
  ident(rest: string): void {
    for (let j = 0; j < rest.length; j++) {
      const c = this.b[this.i];
      if (c === undefined) throw this.error('EOF while parsing a value');
      this.i++;
      if (c !== rest.charCodeAt(j)) throw this.error('expected ident');
    }
  }

  /** A number after its sign (`positive`: there was none). */
  number(positive: boolean): ScannedNumber {
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
    const digits = Buffer.from(this.b.subarray(start, this.i)).toString('latin1');
    const text = positive ? digits : `-${digits}`;
    const value = Number(text);
    if (!Number.isFinite(value)) throw this.error('number out of range');
    return { text, float, value };
  }

  /** A string after its opening quote; runs without escapes are sliced, not copied byte by byte. */
  string(): string {
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

  /**
   * A scalar where serde wanted something else: what serde calls it, after reading it. `[` and
   * `{` are named without being read (serde_json's `peek_invalid_type`).
   */
  scalar(): string {
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
        return describeNumber(this.number(false));
      case Ch.Quote: {
        this.i++;
        return `string ${JSON.stringify(this.string())}`;
      }
      case Ch.LBracket:
        return 'sequence';
      case Ch.LBrace:
        return 'map';
      default:
        if (isDigit(c)) return describeNumber(this.number(true));
        throw this.peekError('expected value');
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

// ---- a whole document as a positioned tree (the admin API's bodies) ---------------------------

interface Base {
  /**
   * Bytes consumed when serde_json reports a type error about this value: just after a
   * scalar, at the opening bracket of an array or object. `JsonDocument.position` turns it
   * into line and column (only on error, so reading stays linear).
   */
  at: number;
}

export type JsonNode =
  | (Base & { kind: 'null' })
  | (Base & { kind: 'bool'; value: boolean })
  | (Base & { kind: 'number'; value: number; integer: boolean; text: string; number: ScannedNumber })
  | (Base & { kind: 'string'; value: string })
  | (Base & { kind: 'array'; items: JsonNode[] })
  | (Base & { kind: 'object'; entries: Array<[string, JsonNode]>; end: number });

export interface JsonDocument {
  root: JsonNode;
  /** Line and column after `consumed` bytes, as serde_json prints them. */
  position(consumed: number): { line: number; column: number };
}

/** Reads a whole document; throws `SerdeError` where serde_json fails, with its text and position. */
export function parseJsonTree(bytes: Uint8Array): JsonDocument {
  const s = new JsonScanner(bytes);
  const root = treeValue(s);
  s.end();
  return { root, position: (n) => s.position(n) };
}

function treeValue(s: JsonScanner): JsonNode {
  const c = s.skipWhitespace();
  if (c === undefined) throw s.peekError('EOF while parsing a value');
  switch (c) {
    case 0x6e: // n
      s.i++;
      s.ident('ull');
      return { kind: 'null', at: s.i };
    case 0x74: // t
      s.i++;
      s.ident('rue');
      return { kind: 'bool', value: true, at: s.i };
    case 0x66: // f
      s.i++;
      s.ident('alse');
      return { kind: 'bool', value: false, at: s.i };
    case Ch.Quote: {
      s.i++;
      const value = s.string();
      return { kind: 'string', value, at: s.i };
    }
    case Ch.LBracket: {
      s.enter();
      const at = ++s.i;
      const items: JsonNode[] = [];
      for (let first = true; s.hasNextElement(first); first = false) items.push(treeValue(s));
      s.i++;
      s.leave();
      return { kind: 'array', items, at };
    }
    case Ch.LBrace: {
      s.enter();
      const at = ++s.i;
      const entries: Array<[string, JsonNode]> = [];
      for (let first = true; s.hasNextKey(first); first = false) {
        s.i++;
        const key = s.string();
        s.colon();
        entries.push([key, treeValue(s)]);
      }
      s.i++;
      s.leave();
      return { kind: 'object', entries, at, end: s.i };
    }
    default: {
      if (c !== Ch.Minus && !isDigit(c)) throw s.peekError('expected value');
      const positive = c !== Ch.Minus;
      if (!positive) s.i++;
      const number = s.number(positive);
      return {
        kind: 'number',
        value: number.value,
        integer: isSerdeInteger(number),
        text: number.text,
        number,
        at: s.i,
      };
    }
  }
}

/** serde's `Unexpected` wording for a value ("string \"yes\"", "map", "integer `5`"). */
export function describeUnexpected(node: JsonNode): string {
  switch (node.kind) {
    case 'null':
      return 'null';
    case 'bool':
      return `boolean \`${node.value}\``;
    case 'number':
      return describeNumber(node.number);
    case 'string':
      return `string ${JSON.stringify(node.value)}`;
    case 'array':
      return 'sequence';
    case 'object':
      return 'map';
  }
}
