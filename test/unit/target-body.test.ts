/**
 * The target body reader (src/ingress/target-body.ts): the texts serde_json gives for the
 * internally tagged `InvocationTargetRequest` of reference-behavior.md §2.7, positions included.
 */
import test from 'ava';
import { formatFloat, SerdeError } from '../../src/http/serde-json.js';
import { parseTargetBody } from '../../src/ingress/target-body.js';

const parse = (text: string) => parseTargetBody(Buffer.from(text));

function failure(text: string): string {
  try {
    parse(text);
  } catch (err) {
    if (err instanceof SerdeError) return err.message;
    throw err;
  }
  throw new Error(`no error for ${text}`);
}

test('the cases of the reference transcripts', (t) => {
  t.is(failure(''), 'EOF while parsing a value at line 1 column 0');
  t.is(failure('{}'), 'missing field `target` at line 1 column 2');
  t.is(failure('{"target":{}}'), 'invalid type: map, expected variant identifier at line 1 column 10');
  t.is(failure('{"target":{"type":"workflow"}}'), 'invalid type: map, expected variant identifier at line 1 column 10');
  t.is(
    failure('{"target":"x"}'),
    'unknown variant `x`, expected one of `workflow`, `idempotentInvocation`, `invocation` at line 1 column 13',
  );
  t.is(failure('{"target":"workflow"}'), 'missing field `workflowName`');
  t.is(failure('{"target":"workflow","workflowName":"Signup"}'), 'missing field `workflowKey`');
  t.is(failure('{"target":"idempotentInvocation"}'), 'missing field `service`');
  t.is(failure('{"target":"idempotentInvocation","service":"Greeter"}'), 'missing field `handler`');
  t.is(
    failure('{"target":"idempotentInvocation","service":"Greeter","handler":"greet"}'),
    'missing field `idempotencyKey`',
  );
  t.is(failure('{"target":"invocation"}'), 'missing field `invocationId`');
  t.is(failure('not json'), 'expected ident at line 1 column 2');
});

test('valid bodies: tag anywhere, unknown fields and nulls ignored, escapes decoded', (t) => {
  t.deepEqual(parse('{"workflowKey":"k","extra":{"a":[1,2.5,null,true]},"target":"workflow","workflowName":"W"}'), {
    target: 'workflow',
    workflowName: 'W',
    workflowKey: 'k',
  });
  t.deepEqual(
    parse(
      ' {"target":"idempotentInvocation","service":"S","key":null,"scope":null,"handler":"h","idempotencyKey":"i","serviceKey":"x"} \n',
    ),
    {
      target: 'idempotentInvocation',
      service: 'S',
      handler: 'h',
      idempotencyKey: 'i',
    },
  );
  t.deepEqual(parse('{"target":"idempotentInvocation","service":"S","key":"k/1","handler":"h","idempotencyKey":"i"}'), {
    target: 'idempotentInvocation',
    service: 'S',
    key: 'k/1',
    handler: 'h',
    idempotencyKey: 'i',
  });
  t.deepEqual(parse('{"targ\\u0065t":"invocation","invocationId":"a\\"\\\\\\/\\n\\u00e9\\ud83d\\ude00"}'), {
    target: 'invocation',
    invocationId: 'a"\\/\né😀',
  });
  // serde also takes an internally tagged enum as a sequence: the tag, then the fields in order.
  t.deepEqual(parse('["workflow",null,"W","k"]'), { target: 'workflow', workflowName: 'W', workflowKey: 'k' });
  t.deepEqual(parse('["invocation","inv_x"]'), { target: 'invocation', invocationId: 'inv_x' });
});

test('errors about the tag carry positions', (t) => {
  t.is(failure('  '), 'EOF while parsing a value at line 1 column 2');
  t.is(failure('\n {\n}'), 'missing field `target` at line 3 column 1');
  t.is(failure('{"target":1}'), 'invalid type: integer `1`, expected variant identifier at line 1 column 11');
  t.is(
    failure('{"target":-1.5}'),
    'invalid type: floating point `-1.5`, expected variant identifier at line 1 column 14',
  );
  t.is(failure('{"target":null}'), 'invalid type: null, expected variant identifier at line 1 column 14');
  t.is(failure('{"target":[]}'), 'invalid type: sequence, expected variant identifier at line 1 column 10');
  t.is(failure('{"target":"workflow","target":"workflow"}'), 'duplicate field `target` at line 1 column 29');
  // A bad tag is reported before a later syntax error, as serde_json reads as it goes.
  t.is(
    failure('{"target":"x", garbage'),
    'unknown variant `x`, expected one of `workflow`, `idempotentInvocation`, `invocation` at line 1 column 13',
  );
  t.is(
    failure('"x"'),
    'invalid type: string "x", expected internally tagged enum InvocationTargetRequest at line 1 column 3',
  );
  t.is(
    failure('12'),
    'invalid type: integer `12`, expected internally tagged enum InvocationTargetRequest at line 1 column 2',
  );
  t.is(failure('[]'), 'missing field `target` at line 1 column 2');
});

test('syntax errors', (t) => {
  t.is(failure('{"target" "workflow"}'), 'expected `:` at line 1 column 11');
  t.is(failure('{"target":"workflow" "x"}'), 'expected `,` or `}` at line 1 column 22');
  t.is(failure('{"target":"workflow",}'), 'trailing comma at line 1 column 22');
  t.is(failure('{,}'), 'key must be a string at line 1 column 2');
  t.is(failure('{1:2}'), 'key must be a string at line 1 column 2');
  t.is(failure('{"a":01}'), 'invalid number at line 1 column 7');
  t.is(failure('{"a":-x}'), 'invalid number at line 1 column 7');
  t.is(failure('{"a":1.}'), 'invalid number at line 1 column 8');
  t.is(failure('{"a":1e}'), 'invalid number at line 1 column 8');
  t.is(failure('{"a":tru}'), 'expected ident at line 1 column 9');
  t.is(failure('{"a":x}'), 'expected value at line 1 column 6');
  t.is(failure('{"a":"x'), 'EOF while parsing a string at line 1 column 7');
  t.is(failure('{"a":1'), 'EOF while parsing an object at line 1 column 6');
  t.is(failure('{"a":[1'), 'EOF while parsing a list at line 1 column 7');
  t.is(failure('{"a":[1,]}'), 'trailing comma at line 1 column 9');
  t.is(failure('{"a":"\\x"}'), 'invalid escape at line 1 column 8');
  t.is(failure('{"a":"\\u12g4"}'), 'invalid escape at line 1 column 12');
  t.is(failure('{"a":"\\udc00"}'), 'lone leading surrogate in hex escape at line 1 column 12');
  t.is(failure('{"a":"\\ud800x"}'), 'unexpected end of hex escape at line 1 column 13');
  t.is(failure('{"a":"\t"}'), 'control character (\\u0000-\\u001F) found while parsing a string at line 1 column 7');
  t.is(failure('{"a":1e999}'), 'number out of range at line 1 column 10');
  t.is(failure('{"target":"invocation","invocationId":"i"} x'), 'trailing characters at line 1 column 44');
  t.is(failure(`{"a":${'['.repeat(127)}`), 'recursion limit exceeded at line 1 column 132');
  t.deepEqual(parse(`{"a":${'['.repeat(126)}${']'.repeat(126)},"target":"invocation","invocationId":"i"}`), {
    target: 'invocation',
    invocationId: 'i',
  });
  const invalidUtf8 = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff]), Buffer.from('"}')]);
  t.throws(() => parseTargetBody(invalidUtf8), {
    instanceOf: SerdeError,
    message: 'invalid unicode code point at line 1 column 8',
  });
});

test("errors about the variant's fields have no position", (t) => {
  t.is(failure('{"target":"workflow","workflowName":null,"workflowKey":"k"}'), 'invalid type: null, expected a string');
  t.is(
    failure('{"target":"workflow","workflowName":1,"workflowKey":"k"}'),
    'invalid type: integer `1`, expected a string',
  );
  t.is(
    failure('{"target":"workflow","workflowName":-0,"workflowKey":"k"}'),
    'invalid type: floating point `-0.0`, expected a string',
  );
  t.is(
    failure('{"target":"workflow","workflowName":18446744073709551616,"workflowKey":"k"}'),
    'invalid type: floating point `1.8446744073709552e19`, expected a string',
  );
  t.is(
    failure('{"target":"workflow","workflowName":true,"workflowKey":"k"}'),
    'invalid type: boolean `true`, expected a string',
  );
  t.is(failure('{"target":"workflow","workflowName":{},"workflowKey":"k"}'), 'invalid type: map, expected a string');
  t.is(
    failure('{"target":"workflow","scope":[],"workflowName":"w","workflowKey":"k"}'),
    'invalid type: sequence, expected a string',
  );
  t.is(
    failure('{"target":"workflow","workflowName":"a","workflowKey":"k","workflowName":"b"}'),
    'duplicate field `workflowName`',
  );
  t.is(
    failure('["workflow"]'),
    'invalid length 1, expected struct variant InvocationTargetRequest::Workflow with 3 elements',
  );
  t.is(
    failure('["invocation"]'),
    'invalid length 0, expected struct variant InvocationTargetRequest::Invocation with 1 element',
  );
  t.is(failure('["invocation","a","b"]'), 'invalid length 2, expected 1 element in sequence');
});

test('floats print as ryu does', (t) => {
  const cases: Array<[number, string]> = [
    [1.5, '1.5'],
    [100, '100.0'],
    [1e15, '1000000000000000.0'],
    [1e16, '1e16'],
    [1.5e300, '1.5e300'],
    [0.0001, '0.0001'],
    [1.5e-7, '1.5e-7'],
    [123456.789, '123456.789'],
    [-2.5e-5, '-0.000025'],
  ];
  for (const [x, text] of cases) t.is(formatFloat(x), text, String(x));
});
