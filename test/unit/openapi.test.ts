import { readFileSync } from 'node:fs';
import test from 'ava';
import type { EndpointManifest, ManifestHandler, ManifestService } from '../../src/protocol/manifest.js';
import { servicesFromManifest } from '../../src/registry/from-manifest.js';
import { serviceOpenApi } from '../../src/registry/openapi.js';
import type { ServiceMeta } from '../../src/registry/types.js';
import { fixturePath } from '../support/fixtures.js';

// The services of reference-behavior.md's probe endpoint (ref-transcripts/_probe-services.mjs.txt),
// registered twice (revision 2), which is what test/fixtures/service-openapi/*.json were generated from.
const json = {
  input: { required: false, contentType: 'application/json' },
  output: { setContentTypeIfEmpty: false, contentType: 'application/json' },
};
const h = (name: string, extra: Partial<ManifestHandler> = {}): ManifestHandler => ({ name, ...json, ...extra });

const greeter: ManifestService = {
  name: 'Greeter',
  ty: 'SERVICE',
  handlers: [
    ...['greet', 'echo', 'noInput', 'fail', 'failDefault', 'flaky', 'sleepy', 'steps', 'awk', 'callSecret'].map((n) =>
      h(n),
    ),
    h('alwaysFailPause', {
      retryPolicyMaxAttempts: 3,
      retryPolicyOnMaxAttempts: 'PAUSE',
      retryPolicyInitialInterval: 100,
      retryPolicyMaxInterval: 200,
    }),
    h('alwaysFailKill', {
      retryPolicyMaxAttempts: 3,
      retryPolicyOnMaxAttempts: 'KILL',
      retryPolicyInitialInterval: 100,
      retryPolicyMaxInterval: 200,
    }),
    h('secret', { ingressPrivate: true }),
    h('bytes', {
      input: { required: false, contentType: 'application/octet-stream' },
      output: { setContentTypeIfEmpty: false, contentType: 'application/octet-stream' },
    }),
  ],
};
const counter: ManifestService = {
  name: 'Counter',
  ty: 'VIRTUAL_OBJECT',
  handlers: [
    ...['add', 'slowAdd', 'clear', 'hang'].map((n) => h(n, { ty: 'EXCLUSIVE' })),
    ...['get', 'keys'].map((n) => h(n, { ty: 'SHARED' })),
  ],
};
const signup: ManifestService = {
  name: 'Signup',
  ty: 'WORKFLOW',
  handlers: [h('run', { ty: 'WORKFLOW' }), ...['verify', 'status', 'peek'].map((n) => h(n, { ty: 'SHARED' }))],
};
const manifest: EndpointManifest = {
  protocolMode: 'BIDI_STREAM',
  minProtocolVersion: 5,
  maxProtocolVersion: 7,
  services: [greeter, counter, signup],
};
const services = servicesFromManifest(manifest, { deploymentId: 'dp_15mkDZVNLJ7axAH3QeEdtQt', revisionOf: () => 2 });
const byName = (name: string): ServiceMeta => services.find((s) => s.name === name)!;

const INGRESS = 'http://localhost:8080/';

for (const name of ['Greeter', 'Counter', 'Signup']) {
  test(`${name}: same document as the reference (servers url aside)`, (t) => {
    const reference = JSON.parse(
      readFileSync(fixturePath('service-openapi', `service-openapi-${name}-1.7.12.json`), 'utf8'),
    ) as {
      servers: Array<{ url: string }>;
    };
    reference.servers[0]!.url = INGRESS;
    // Round-trip through JSON so `undefined` members compare like absent ones.
    t.deepEqual(JSON.parse(JSON.stringify(serviceOpenApi(byName(name), INGRESS))), reference);
  });
}

test('paths per service type, private handler left out', (t) => {
  const paths = (name: string) =>
    Object.keys((serviceOpenApi(byName(name), INGRESS) as { paths: object }).paths).sort();
  const greeterPaths = paths('Greeter');
  t.true(greeterPaths.includes('/restate/call/Greeter/greet'));
  t.true(greeterPaths.includes('/restate/send/Greeter/greet'));
  t.true(greeterPaths.includes('/restate/invocation/Greeter/greet/{idempotencyKey}/attach'));
  t.true(greeterPaths.includes('/restate/invocation/Greeter/greet/{idempotencyKey}/output'));
  t.false(greeterPaths.some((p) => p.includes('/secret')));
  t.is(greeterPaths.length, 13 * 4);
  t.deepEqual(
    paths('Signup').filter((p) => !p.startsWith('/restate/call/') && !p.startsWith('/restate/send/')),
    ['/restate/workflow/Signup/{key}/attach', '/restate/workflow/Signup/{key}/output'],
  );
  t.true(paths('Counter').includes('/restate/invocation/Counter/{key}/add/{idempotencyKey}/output'));
});

test("info carries the revision, servers the ingress URL, content types the handler's", (t) => {
  const doc = serviceOpenApi(byName('Greeter'), 'http://example.test:8080/') as {
    info: { title: string; version: string };
    servers: Array<{ url: string; description: string }>;
    paths: Record<string, { post: { requestBody: { content: object }; responses: { '200': { content: object } } } }>;
  };
  t.deepEqual(doc.info, { title: 'Greeter', version: '2' });
  t.deepEqual(doc.servers, [{ url: 'http://example.test:8080/', description: 'Restate Ingress URL' }]);
  const bytes = doc.paths['/restate/call/Greeter/bytes']!.post;
  t.deepEqual(bytes.requestBody.content, { 'application/octet-stream': {} });
  t.deepEqual(bytes.responses['200'].content, { 'application/octet-stream': {} });
});

test('a private service has no paths', (t) => {
  t.deepEqual((serviceOpenApi({ ...byName('Greeter'), public: false }, INGRESS) as { paths: object }).paths, {});
});

test('JSON schemas become components referred to by $ref, their own references rebased', (t) => {
  const greeterMeta = byName('Greeter');
  const input = { $defs: { Name: { type: 'string' } }, type: 'object', properties: { name: { $ref: '#/$defs/Name' } } };
  const withSchema: ServiceMeta = {
    ...greeterMeta,
    metadata: { team: 'a' },
    handlers: [
      {
        ...greeterMeta.handlers[0]!,
        input: { required: true, contentType: 'application/json', jsonSchema: input },
        output: { contentType: 'application/json', setContentTypeIfEmpty: false, jsonSchema: { type: 'string' } },
        metadata: { owner: 'b' },
        documentation: 'Greets',
      },
    ],
  };
  type Op = {
    description: string;
    requestBody?: object;
    responses: { '200': object };
    'x-restate-extensions'?: object;
  };
  const doc = serviceOpenApi(withSchema, INGRESS) as {
    info: object;
    paths: Record<string, { post?: Op; get?: Op }>;
    components: { schemas: Record<string, unknown> };
  };
  const call = doc.paths['/restate/call/Greeter/greet']!.post!;
  t.deepEqual(call.requestBody, {
    content: { 'application/json': { schema: { $ref: '#/components/schemas/greetRequest' } } },
    required: true,
  });
  t.deepEqual(call.responses['200'], {
    content: { 'application/json': { schema: { $ref: '#/components/schemas/greetResponse' } } },
    description: '',
  });
  t.deepEqual(doc.components.schemas['greetRequest'], {
    ...input,
    properties: { name: { $ref: '#/components/schemas/greetRequest/$defs/Name' } },
  });
  t.deepEqual(doc.components.schemas['greetResponse'], { type: 'string' });
  t.truthy(doc.components.schemas['RestateError']);
  // The handler's documentation follows the deprecation note of the attach and output paths.
  t.is(
    doc.paths['/restate/invocation/Greeter/greet/{idempotencyKey}/attach']!.get!.description,
    'Deprecated: use POST /restate/lookup with idempotency information to obtain an invocation id, then GET /restate/attach/{invocationId}. Greets',
  );
  t.deepEqual(call['x-restate-extensions'], { owner: 'b' });
  t.deepEqual(doc.info, { title: 'Greeter', version: '2', 'x-restate-extensions': { team: 'a' } });
});
