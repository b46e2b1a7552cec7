/**
 * A handler's declared input and output as the reference reads them (observed on
 * restate-server 1.7.12): the descriptions the admin API shows, and which requests pass.
 */
import test from 'ava';
import { describeInput, describeOutput, inputFailure } from '../../src/registry/payload-rules.js';
import { servicesFromManifest } from '../../src/registry/from-manifest.js';

const json = 'application/json';
const empty = new Uint8Array();
const body = new TextEncoder().encode('{}');

test('descriptions: the schema title, else its type, else the content-type', (t) => {
  t.is(
    describeInput({ required: false, contentType: json, jsonSchema: { type: 'object', title: 'Person' } }),
    "JSON 'Person'",
  );
  t.is(describeInput({ required: false, contentType: json, jsonSchema: { type: 'array' } }), 'JSON array');
  t.is(describeInput({ required: false, contentType: json, jsonSchema: { anyOf: [] } }), json);
  t.is(describeInput({ required: true, contentType: json }), json);
  t.is(describeInput({ required: false }), 'none');
  t.is(
    describeOutput({ contentType: json, setContentTypeIfEmpty: false, jsonSchema: { type: 'string' } }),
    'JSON string',
  );
  t.is(describeOutput({ contentType: json, setContentTypeIfEmpty: true }), 'optional application/json');
  t.is(describeOutput({ setContentTypeIfEmpty: false }), 'none');
});

test('a handler that declares no input takes anything, one that declares no output answers JSON', (t) => {
  const [service] = servicesFromManifest(
    {
      protocolMode: 'BIDI_STREAM',
      minProtocolVersion: 5,
      maxProtocolVersion: 6,
      services: [{ name: 'S', ty: 'SERVICE', handlers: [{ name: 'h' }] }],
    },
    { deploymentId: 'dp_x', revisionOf: () => 1 },
  );
  const h = service!.handlers[0]!;
  t.is(describeInput(h.input), '*/*');
  t.is(describeOutput(h.output), json);
  t.is(inputFailure(h.input, 'text/plain', body), undefined);
  t.is(inputFailure(h.input, undefined, empty), undefined);
  t.is(inputFailure(h.input, undefined, body), 'Empty content-type');
});

test('which requests pass, and the reference texts of those that do not', (t) => {
  const schema = { required: false, contentType: json, jsonSchema: { type: 'object' } };
  t.is(inputFailure(schema, json, body), undefined);
  t.is(inputFailure(schema, 'application/json; charset=utf-8', body), undefined);
  t.is(inputFailure(schema, undefined, empty), undefined, 'no body and no content-type: the input is optional');
  t.is(inputFailure(schema, json, empty), 'Empty body not allowed');
  t.is(inputFailure(schema, 'text/plain', body), "Content-type 'text/plain' does not match 'application/json'");
  t.is(inputFailure(schema, 'foo', body), "Content-type 'foo' does not match 'application/json'");

  const plain = { required: false, contentType: json };
  t.is(inputFailure(plain, json, empty), undefined, 'without a schema an empty body passes');
  t.is(inputFailure(plain, undefined, body), 'Empty content-type');

  t.is(inputFailure({ required: true, contentType: json }, undefined, empty), 'Empty content-type');
  t.is(inputFailure({ required: false, contentType: 'text/*' }, 'text/csv', body), undefined);
  t.is(
    inputFailure({ required: false }, json, body),
    `Expected body and content-type to be empty, but wasn't with content-type 'Some("application/json")'`,
  );
});
