/**
 * A JSON parser that keeps each value's position and fails with serde_json's wording and
 * `at line L column C` positions, so the admin API's 400/422 texts read like the reference's
 * (reference-behavior.md §1.2: `Failed to parse the request body as JSON: expected ident at
 * line 1 column 2`). Positions count bytes, as serde_json does.
 */

export interface Position {
  line: number;
  column: number;
}

interface Base {
  /**
   * Bytes consumed when serde_json reports a type error about this value: just after a
   * scalar, at the opening bracket of an array or object. `JsonDocument.position` turns it
   * into line and column (only on error, so parsing stays linear).
   */
  at: number;
}

export type JsonNode =
  | (Base & { kind: 'null' })
  | (Base & { kind: 'bool'; value: boolean })
  | (Base & { kind: 'number'; value: number; integer: boolean; text: string })
  | (Base & { kind: 'string'; value: string })
  | (Base & { kind: 'array'; items: JsonNode[] })
  | (Base & { kind: 'object'; entries: Array<[string, JsonNode]>; end: number });

export class JsonSyntaxError extends Error {
  constructor(
    readonly reason: string,
    readonly position: Position,
  ) {
    super(`${reason} at line ${position.line} column ${position.column}`);
    this.name = 'JsonSyntaxError';
  }
}

const MAX_DEPTH = 128;

class Parser {
  private i = 0;
  private depth = 0;

  constructor(private readonly buf: Buffer) {}

  /** Position after consuming `n` bytes (serde_json: line of, and bytes into, the last line). */
  pos(n: number = this.i): Position {
    let line = 1;
    let lineStart = 0;
    for (let k = 0; k < n && k < this.buf.length; k++) {
      if (this.buf[k] === 0x0a) {
        line++;
        lineStart = k + 1;
      }
    }
    return { line, column: n - lineStart };
  }

  /** Error at the consumed position. */
  private fail(reason: string): never {
    throw new JsonSyntaxError(reason, this.pos());
  }
  /** Error at the next (peeked) byte. */
  private failPeek(reason: string): never {
    throw new JsonSyntaxError(reason, this.pos(this.i < this.buf.length ? this.i + 1 : this.i));
  }

  private peek(): number | undefined {
    return this.buf[this.i];
  }

  private skipWs(): void {
    for (let c = this.peek(); c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d; c = this.peek()) this.i++;
  }

  parseDocument(): JsonNode {
    const value = this.value();
    this.skipWs();
    if (this.i < this.buf.length) this.failPeek('trailing characters');
    return value;
  }

  private value(): JsonNode {
    this.skipWs();
    const c = this.peek();
    if (c === undefined) this.failPeek('EOF while parsing a value');
    switch (c) {
      case 0x6e: // n
        this.ident('null');
        return { kind: 'null', at: this.i };
      case 0x74: // t
        this.ident('true');
        return { kind: 'bool', value: true, at: this.i };
      case 0x66: // f
        this.ident('false');
        return { kind: 'bool', value: false, at: this.i };
      case 0x22: // "
        this.i++;
        return { kind: 'string', value: this.string(), at: this.i };
      case 0x5b: // [
        return this.nested(() => this.array());
      case 0x7b: // {
        return this.nested(() => this.object());
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
        return this.failPeek('expected value');
    }
  }

  private nested(parse: () => JsonNode): JsonNode {
    if (++this.depth > MAX_DEPTH) this.fail('recursion limit exceeded');
    const node = parse();
    this.depth--;
    return node;
  }

  private ident(word: string): void {
    this.i++;
    for (let k = 1; k < word.length; k++) {
      const c = this.buf[this.i];
      if (c === undefined) this.fail('EOF while parsing a value');
      this.i++;
      if (c !== word.charCodeAt(k)) this.fail('expected ident');
    }
  }

  private number(): JsonNode {
    const start = this.i;
    const digit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
    if (this.peek() === 0x2d) this.i++;
    const first = this.buf[this.i];
    if (first === undefined) this.fail('EOF while parsing a value');
    this.i++;
    if (!digit(first)) this.fail('invalid number');
    if (first === 0x30 && digit(this.peek())) this.failPeek('invalid number');
    while (digit(this.peek())) this.i++;
    let integer = true;
    if (this.peek() === 0x2e) {
      integer = false;
      this.i++;
      if (!digit(this.peek())) {
        if (this.peek() === undefined) this.fail('EOF while parsing a value');
        this.i++;
        this.fail('invalid number');
      }
      while (digit(this.peek())) this.i++;
    }
    if (this.peek() === 0x65 || this.peek() === 0x45) {
      integer = false;
      this.i++;
      if (this.peek() === 0x2b || this.peek() === 0x2d) this.i++;
      if (!digit(this.peek())) {
        if (this.peek() === undefined) this.fail('EOF while parsing a value');
        this.i++;
        this.fail('invalid number');
      }
      while (digit(this.peek())) this.i++;
    }
    const text = this.buf.toString('latin1', start, this.i);
    const value = Number(text);
    if (!Number.isFinite(value)) this.fail('number out of range');
    return { kind: 'number', value, integer, text, at: this.i };
  }

  /** After the opening quote; consumes the closing one. */
  private string(): string {
    let out = '';
    let runStart = this.i;
    for (;;) {
      const c = this.buf[this.i];
      if (c === undefined) this.fail('EOF while parsing a string');
      this.i++;
      if (c === 0x22) return out + this.buf.toString('utf8', runStart, this.i - 1);
      if (c < 0x20) this.fail('control character (\\u0000-\\u001F) found while parsing a string');
      if (c !== 0x5c) continue;
      out += this.buf.toString('utf8', runStart, this.i - 1);
      out += this.escape();
      runStart = this.i;
    }
  }

  private escape(): string {
    const c = this.buf[this.i];
    if (c === undefined) this.fail('EOF while parsing a string');
    this.i++;
    const simple: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' };
    if (simple[c] !== undefined) return simple[c]!;
    if (c !== 0x75) this.fail('invalid escape');
    const unit = this.hex4();
    if (unit < 0xd800 || unit > 0xdfff) return String.fromCharCode(unit);
    if (unit >= 0xdc00) this.fail('lone leading surrogate in hex escape');
    if (this.buf[this.i] !== 0x5c || this.buf[this.i + 1] !== 0x75) {
      this.fail('unexpected end of hex escape');
    }
    this.i += 2;
    const low = this.hex4();
    if (low < 0xdc00 || low > 0xdfff) this.fail('lone leading surrogate in hex escape');
    return String.fromCharCode(unit, low);
  }

  private hex4(): number {
    let n = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.buf[this.i];
      if (c === undefined) this.fail('EOF while parsing a string');
      this.i++;
      const d = parseInt(String.fromCharCode(c), 16);
      if (Number.isNaN(d)) this.fail('invalid escape');
      n = n * 16 + d;
    }
    return n;
  }

  private array(): JsonNode {
    const at = this.i + 1;
    this.i++;
    const items: JsonNode[] = [];
    this.skipWs();
    if (this.peek() === 0x5d) {
      this.i++;
      return { kind: 'array', items, at };
    }
    for (;;) {
      items.push(this.value());
      this.skipWs();
      const c = this.peek();
      if (c === undefined) this.failPeek('EOF while parsing a list');
      if (c === 0x5d) {
        this.i++;
        return { kind: 'array', items, at };
      }
      if (c !== 0x2c) this.failPeek('expected `,` or `]`');
      this.i++;
      this.skipWs();
      if (this.peek() === 0x5d) this.failPeek('trailing comma');
    }
  }

  private object(): JsonNode {
    const at = this.i + 1;
    this.i++;
    const entries: Array<[string, JsonNode]> = [];
    this.skipWs();
    if (this.peek() === 0x7d) {
      this.i++;
      return { kind: 'object', entries, at, end: this.i };
    }
    for (;;) {
      this.skipWs();
      const q = this.peek();
      if (q === undefined) this.failPeek('EOF while parsing an object');
      if (q === 0x7d && entries.length > 0) this.failPeek('trailing comma');
      if (q !== 0x22) this.failPeek('key must be a string');
      this.i++;
      const key = this.string();
      this.skipWs();
      const colon = this.peek();
      if (colon === undefined) this.failPeek('EOF while parsing an object');
      if (colon !== 0x3a) this.failPeek('expected `:`');
      this.i++;
      entries.push([key, this.value()]);
      this.skipWs();
      const c = this.peek();
      if (c === undefined) this.failPeek('EOF while parsing an object');
      if (c === 0x7d) {
        this.i++;
        return { kind: 'object', entries, at, end: this.i };
      }
      if (c !== 0x2c) this.failPeek('expected `,` or `}`');
      this.i++;
    }
  }
}

export interface JsonDocument {
  root: JsonNode;
  /** Line and column after `consumed` bytes, as serde_json prints them. */
  position(consumed: number): Position;
}

/** Parses a whole document; throws JsonSyntaxError. */
export function parseJsonText(buf: Buffer): JsonDocument {
  const parser = new Parser(buf);
  return { root: parser.parseDocument(), position: (n) => parser.pos(n) };
}

/** serde's `Unexpected` wording for a value ("string \"yes\"", "map", "integer `5`"). */
export function describeUnexpected(node: JsonNode): string {
  switch (node.kind) {
    case 'null':
      return 'null';
    case 'bool':
      return `boolean \`${node.value}\``;
    case 'number':
      return node.integer ? `integer \`${node.text}\`` : `floating point \`${node.value}\``;
    case 'string':
      return `string ${JSON.stringify(node.value)}`;
    case 'array':
      return 'sequence';
    case 'object':
      return 'map';
  }
}
