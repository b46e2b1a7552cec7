/**
 * The serde_json-compatible reader both ports share (src/http/serde-json.ts), read into a tree
 * as the admin API reads its bodies: serde_json's texts and positions, its recursion limit, and
 * how it names numbers it did not expect.
 */
import test from 'ava';
import { describeUnexpected, parseJsonTree, SerdeError } from '../../src/http/serde-json.js';

function failure(text: string): string {
  try {
    parseJsonTree(Buffer.from(text));
  } catch (err) {
    if (err instanceof SerdeError) return err.message;
    throw err;
  }
  throw new Error(`no error for ${text}`);
}

const described = (text: string) => describeUnexpected(parseJsonTree(Buffer.from(text)).root);

test('syntax errors carry serde_json texts and positions', (t) => {
  t.is(failure(''), 'EOF while parsing a value at line 1 column 0');
  t.is(failure('nope'), 'expected ident at line 1 column 2');
  t.is(failure('garbage'), 'expected value at line 1 column 1');
  t.is(failure('{"a":1,}'), 'trailing comma at line 1 column 8');
  t.is(failure('[1,]'), 'trailing comma at line 1 column 4');
  t.is(failure('{"a" 1}'), 'expected `:` at line 1 column 6');
  t.is(failure('{1:2}'), 'key must be a string at line 1 column 2');
  t.is(failure('[1 2]'), 'expected `,` or `]` at line 1 column 4');
  t.is(failure('{"a":1\n "b"}'), 'expected `,` or `}` at line 2 column 2');
  t.is(failure('01'), 'invalid number at line 1 column 2');
  t.is(failure('1.'), 'EOF while parsing a value at line 1 column 2');
  t.is(failure('1e+'), 'EOF while parsing a value at line 1 column 3');
  t.is(failure('"\\q"'), 'invalid escape at line 1 column 3');
  t.is(failure('"\\udc00"'), 'lone leading surrogate in hex escape at line 1 column 7');
  t.is(failure('1 2'), 'trailing characters at line 1 column 3');
  t.is(failure('1e400'), 'number out of range at line 1 column 5');
});

test('the 128th level of nesting is refused, as serde_json counts it', (t) => {
  t.notThrows(() => parseJsonTree(Buffer.from(`${'['.repeat(127)}${']'.repeat(127)}`)));
  t.is(failure(`${'['.repeat(128)}${']'.repeat(128)}`), 'recursion limit exceeded at line 1 column 128');
});

test('values are named as serde_json names what it did not expect', (t) => {
  t.is(described('5'), 'integer `5`');
  t.is(described('-5'), 'integer `-5`');
  t.is(described('18446744073709551615'), 'integer `18446744073709551615`');
  t.is(described('18446744073709551616'), 'floating point `1.8446744073709552e19`');
  t.is(described('-0'), 'floating point `-0.0`');
  t.is(described('2.50'), 'floating point `2.5`');
  t.is(described('"yes"'), 'string "yes"');
  t.is(described('[1]'), 'sequence');
  t.is(described('{}'), 'map');
  t.is(described('true'), 'boolean `true`');
  t.is(described('null'), 'null');
});

test('positions of values in the tree: after a scalar, inside an opening bracket', (t) => {
  const doc = parseJsonTree(Buffer.from('{\n  "a": [1, "x"]\n}'));
  if (doc.root.kind !== 'object') return t.fail();
  const [, a] = doc.root.entries[0]!;
  t.deepEqual(doc.position(a.at), { line: 2, column: 8 });
  if (a.kind !== 'array') return t.fail();
  t.deepEqual(doc.position(a.items[1]!.at), { line: 2, column: 14 });
});
