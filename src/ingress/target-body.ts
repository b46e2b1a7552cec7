/**
 * The JSON *target body* of `POST /restate/lookup|attach|output` (reference-behavior.md §2.7):
 *
 *   {"target":"workflow","workflowName","workflowKey","scope"?}
 *   {"target":"idempotentInvocation","service","key"?,"handler","idempotencyKey","scope"?}
 *   {"target":"invocation","invocationId"}
 *
 * Restate reads it with serde_json into an internally tagged enum, and a bad body's answer
 * carries serde's error text verbatim ("missing field `target` at line 1 column 2"). So this
 * reads the tagged enum as serde does, as the bytes stream (src/http/serde-json.ts scans them):
 * syntax errors and errors about the tag carry `at line L column C`, errors about the
 * variant's fields (read from a buffered copy) carry none. Unknown fields are ignored; `null`
 * counts as absent for the optional ones.
 */
import { Ch, JsonScanner, SerdeError } from '../http/serde-json.js';

export type TargetBody =
  | { target: 'workflow'; workflowName: string; workflowKey: string; scope?: string }
  | {
      target: 'idempotentInvocation';
      service: string;
      key?: string;
      handler: string;
      idempotencyKey: string;
      scope?: string;
    }
  | { target: 'invocation'; invocationId: string };

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

/** `one of`, as serde's `OneOf` lists expected names. */
function oneOf(names: string[]): string {
  const quoted = names.map((n) => `\`${n}\``);
  if (quoted.length === 1) return quoted[0]!;
  if (quoted.length === 2) return `${quoted[0]} or ${quoted[1]}`;
  return `one of ${quoted.join(', ')}`;
}

/** The streaming half: serde's derive of an internally tagged enum, over the scanner. */
class Reader {
  private readonly s: JsonScanner;

  constructor(bytes: Uint8Array) {
    this.s = new JsonScanner(bytes);
  }

  /** The whole body: the tagged enum, then nothing but whitespace. */
  document(): TargetBody {
    const s = this.s;
    const c = s.skipWhitespace();
    if (c === undefined) throw s.peekError('EOF while parsing a value');
    let body: TargetBody;
    if (c === Ch.LBrace) body = this.taggedMap();
    else if (c === Ch.LBracket) body = this.taggedSeq();
    else {
      const unexpected = s.scalar();
      throw s.error(`invalid type: ${unexpected}, expected internally tagged enum ${ENUM}`);
    }
    s.end();
    return body;
  }

  /** `{...}` at the top: the tag is read as it comes, every other entry is buffered. */
  private taggedMap(): TargetBody {
    const s = this.s;
    s.enter();
    s.i++;
    let tag: TargetBody['target'] | undefined;
    const entries: Array<[string, Content]> = [];
    for (let first = true; s.hasNextKey(first); first = false) {
      s.i++;
      const key = s.string();
      if (key === TAG) {
        // serde reports this one after trying to close the map, which moves the position.
        if (tag !== undefined) throw this.afterEndMap(`duplicate field \`${TAG}\``);
        s.colon();
        tag = this.variant();
      } else {
        s.colon();
        entries.push([key, this.value()]);
      }
    }
    s.i++;
    s.leave();
    if (tag === undefined) throw s.error(`missing field \`${TAG}\``);
    return fromMap(tag, entries);
  }

  /** `[tag, field...]`: serde also accepts an internally tagged enum as a sequence. */
  private taggedSeq(): TargetBody {
    const s = this.s;
    s.enter();
    s.i++;
    let tag: TargetBody['target'] | undefined;
    const elements: Content[] = [];
    while (s.hasNextElement(tag === undefined)) {
      if (tag === undefined) tag = this.variant();
      else elements.push(this.value());
    }
    if (tag === undefined) {
      // `[]`: closed first, then reported.
      s.i++;
      s.leave();
      throw s.error(`missing field \`${TAG}\``);
    }
    s.i++;
    s.leave();
    return fromSeq(tag, elements);
  }

  /** An error raised inside the top map, positioned after serde_json's `end_map` ran. */
  private afterEndMap(reason: string): SerdeError {
    if (this.s.skipWhitespace() === Ch.RBrace) this.s.i++;
    return this.s.error(reason);
  }

  /** The tag's value: a variant name, read as serde_json's `deserialize_identifier`. */
  private variant(): TargetBody['target'] {
    const s = this.s;
    const c = s.skipWhitespace();
    if (c === undefined) throw s.peekError('EOF while parsing a value');
    if (c === Ch.Quote) {
      s.i++;
      const name = s.string();
      if ((VARIANT_NAMES as string[]).includes(name)) return name as TargetBody['target'];
      throw s.error(`unknown variant \`${name}\`, expected ${oneOf(VARIANT_NAMES)}`);
    }
    const unexpected = s.scalar();
    throw s.error(`invalid type: ${unexpected}, expected variant identifier`);
  }

  /** Any JSON value (serde's `Content`): strings and null are kept, the rest only described. */
  private value(): Content {
    const s = this.s;
    const c = s.skipWhitespace();
    if (c === undefined) throw s.peekError('EOF while parsing a value');
    if (c === Ch.Quote) {
      s.i++;
      return { str: s.string() };
    }
    if (c === Ch.LBracket) {
      s.enter();
      s.i++;
      for (let first = true; s.hasNextElement(first); first = false) this.value();
      s.i++;
      s.leave();
      return { unexpected: 'sequence' };
    }
    if (c === Ch.LBrace) {
      s.enter();
      s.i++;
      for (let first = true; s.hasNextKey(first); first = false) {
        s.i++;
        s.string();
        s.colon();
        this.value();
      }
      s.i++;
      s.leave();
      return { unexpected: 'map' };
    }
    const unexpected = s.scalar();
    return unexpected === 'null' ? { null: true } : { unexpected };
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
      throw new SerdeError(
        `invalid length ${i}, expected struct variant ${ENUM}::${rust} with ${n} element${n === 1 ? '' : 's'}`,
      );
    }
    values.set(f.name, fieldString(element, f.optional));
  });
  if (elements.length > n)
    throw new SerdeError(`invalid length ${elements.length}, expected ${n} element${n === 1 ? '' : 's'} in sequence`);
  return build(tag, values);
}

/** Reads a target body, or throws the `SerdeError` serde_json would give for it. */
export function parseTargetBody(bytes: Uint8Array): TargetBody {
  return new Reader(bytes).document();
}
