/**
 * The admin API's registry routes end to end: the Koa app in-process on a free port with an
 * in-memory registry store, against real SDK endpoints (h2c and HTTP/1.1) in child processes.
 * Expected statuses, content types and bodies are those of reference-behavior.md §1.2, §3.1–§3.4.
 */
import Router from '@koa/router';
import test, { type ExecutionContext } from 'ava';
import got, { type Response } from 'got';
import { createAdminApp } from '../../src/admin/app.js';
import { AdminError } from '../../src/admin/errors.js';
import { Registry } from '../../src/registry/registry.js';
import { startService, type StartedService } from '../support/sdk-service.js';
import { freePort } from '../support/ports.js';
import { memoryStore, serveAdmin, testConfig } from '../support/admin-fixture.js';
import { capturingLogger } from '../support/log-lines.js';

let h2: StartedService;
let h1: StartedService;

test.before(async () => {
  [h2, h1] = await Promise.all([startService('basic.mjs'), startService('basic.mjs', { env: { HTTP1: '1' } })]);
});
test.after.always(async () => {
  await Promise.all([h2?.stop(), h1?.stop()]);
});

const config = testConfig;

type Admin = Awaited<ReturnType<typeof startAdmin>>;

async function startAdmin(t: ExecutionContext, extraRoutes?: (router: Router) => void) {
  const { store, box } = memoryStore();
  const registry = await Registry.load(store);
  const { log, lines: logged } = await capturingLogger();
  const app = createAdminApp({ registry, config, extraRoutes, log });
  const { base, call } = await serveAdmin(t, app);
  const register = (body: Record<string, unknown>) => call('POST', 'deployments', body);
  return { base, store, box, registry, call, register, logged };
}

const json = (r: Response<string>) => JSON.parse(r.body) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test bodies
const isJson = (r: Response<string>) => r.headers['content-type'] === 'application/json';
const isText = (r: Response<string>) => r.headers['content-type'] === 'text/plain; charset=utf-8';
const isEmpty = (r: Response<string>) =>
  r.body === '' && r.headers['content-type'] === undefined && r.headers['content-length'] === '0';
const noSlash = (url: string) => url.replace(/\/$/, '');

async function expectError(
  t: ExecutionContext,
  r: Response<string>,
  status: number,
  message: string,
  code: string | null = null,
) {
  t.is(r.statusCode, status, r.body);
  t.true(isJson(r));
  t.is(r.body, JSON.stringify({ message, restate_code: code }));
}

test('register: 201 with the full metadata, then no-op 200, trailing slash, force bumps the revision', async (t) => {
  const admin = await startAdmin(t);
  const first = await admin.register({ uri: noSlash(h2.url) });
  t.is(first.statusCode, 201);
  t.true(isJson(first));
  const body = json(first);
  const id = body['id'] as string;
  t.regex(id, /^dp_1[0-9A-Za-z]{22}$/);
  t.is(first.headers['location'], `deployments/${id}`);
  t.deepEqual(Object.keys(body), ['id', 'services', 'min_protocol_version', 'max_protocol_version', 'sdk_version']);
  t.is(body['sdk_version'], 'restate-sdk-typescript/1.17.2');
  // Byte-exact pieces of §3.3's examples.
  t.true(
    first.body.includes(
      '{"name":"add","ty":"Exclusive","public":true,"input_description":"application/json","output_description":"application/json","retry_policy":{"max_attempts":null}}',
    ),
  );
  t.true(
    first.body.includes(
      '{"name":"greet","public":true,"input_description":"application/json","output_description":"application/json","retry_policy":{"max_attempts":null}}',
    ),
  );
  t.true(first.body.includes('{"name":"secret","public":false,'));
  t.true(
    first.body.includes(
      '"retry_policy":{"initial_interval":"100ms","max_attempts":3,"max_interval":"200ms","on_max_attempts":"Kill"}',
    ),
  );
  t.true(
    first.body.includes(
      `"deployment_id":"${id}","revision":1,"public":true,"idempotency_retention":"1d","journal_retention":"1d","inactivity_timeout":"1m","abort_timeout":"10m","enable_lazy_state":false,"retry_policy":{"initial_interval":"500ms","exponentiation_factor":2.0,"max_attempts":70,"max_interval":"1m","on_max_attempts":"Pause"}}`,
    ),
  );
  t.true(
    first.body.includes(
      '"revision":1,"public":true,"idempotency_retention":"1d","workflow_completion_retention":"1d","journal_retention":"1d"',
    ),
  );
  t.true(first.body.includes('{"name":"run","ty":"Workflow","public":true'));

  for (const again of [
    { uri: noSlash(h2.url) },
    { uri: h2.url, force: false },
    { uri: noSlash(h2.url), use_http_11: true, force: false },
  ]) {
    const r = await admin.register(again);
    t.is(r.statusCode, 200, JSON.stringify(again));
    t.is(json(r)['id'], id);
    t.is(r.headers['location'], `deployments/${id}`);
    t.true(json(r)['services'].every((s: { revision: number }) => s.revision === 1));
  }

  const forced = await admin.register({ uri: h2.url, force: true });
  t.is(forced.statusCode, 200);
  t.is(json(forced)['id'], id);
  t.true(json(forced)['services'].every((s: { revision: number }) => s.revision === 2));

  const list = await admin.call('GET', 'deployments');
  t.is(list.statusCode, 200);
  const [entry] = json(list)['deployments'];
  t.deepEqual(Object.keys(entry), [
    'id',
    'uri',
    'protocol_type',
    'http_version',
    'created_at',
    'min_protocol_version',
    'max_protocol_version',
    'sdk_version',
    'services',
  ]);
  t.like(entry, {
    id,
    uri: h2.url,
    protocol_type: 'BidiStream',
    http_version: 'HTTP/2.0',
    min_protocol_version: 5,
    max_protocol_version: 7,
  });
  t.regex(entry.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}000000Z$/);
  t.deepEqual(entry.services, [
    { name: 'Greeter', revision: 2 },
    { name: 'Counter', revision: 2 },
    { name: 'Signup', revision: 2 },
  ]);

  const detail = await admin.call('GET', `deployments/${id}`);
  t.is(detail.statusCode, 200);
  t.is(json(detail)['services'][0].handlers.length, 3);
  t.is((admin.box.doc as { deployments: unknown[] }).deployments.length, 1, 'saved through the store');
});

test('a second URI with the same services bumps revisions; dry run stores nothing; delete falls back', async (t) => {
  const admin = await startAdmin(t);
  const oldId = json(await admin.register({ uri: h2.url }))['id'];
  const dry = await admin.register({ uri: `${h2.url}v2`, dry_run: true });
  t.is(dry.statusCode, 201);
  t.not(json(dry)['id'], oldId);
  t.is(json(await admin.call('GET', 'deployments'))['deployments'].length, 1);

  const v2 = await admin.register({ uri: `${h2.url}v2` });
  t.is(v2.statusCode, 201);
  const newId = json(v2)['id'];
  t.true(json(v2)['services'].every((s: { revision: number }) => s.revision === 2));
  const greeter = json(await admin.call('GET', 'services/Greeter'));
  t.like(greeter, { revision: 2, deployment_id: newId });
  t.true(greeter['handlers'].some((h: { name: string }) => h.name === 'extra'));
  const old = json(await admin.call('GET', `deployments/${oldId}`));
  t.is(old['services'][0].revision, 1, 'the old deployment keeps its revisions');

  t.true(isEmpty(await admin.call('DELETE', `deployments/${newId}`)));
  t.is((await admin.call('DELETE', `deployments/${newId}?force=false`)).statusCode, 501);
  const deleted = await admin.call('DELETE', `deployments/${newId}?force=true`);
  t.is(deleted.statusCode, 202);
  t.true(isEmpty(deleted));
  const back = json(await admin.call('GET', 'services/Greeter'));
  t.like(back, { revision: 1, deployment_id: oldId });
  t.false(back['handlers'].some((h: { name: string }) => h.name === 'extra'));

  await expectError(
    t,
    await admin.call('DELETE', `deployments/${newId}?force=true`),
    404,
    `not found in the schema registry: deployment with id '${newId}'`,
  );
  const garbage = await admin.call('DELETE', 'deployments/garbage?force=true');
  t.is(garbage.statusCode, 400);
  t.true(isText(garbage));
  t.is(garbage.body, 'Invalid URL: Cannot parse `deployment` with value `garbage`: bad format');
  const badForce = await admin.call('DELETE', `deployments/${oldId}?force=yes`);
  t.is(badForce.statusCode, 400);
  t.true(isText(badForce));
});

test('a service type change is refused without breaking (409 META0006)', async (t) => {
  const admin = await startAdmin(t);
  t.is((await admin.register({ uri: `${h2.url}var` })).statusCode, 201);
  await expectError(
    t,
    await admin.register({ uri: `${h2.url}var-object` }),
    409,
    "[META0006] detected a new service revision for 'VarSvc' changing the service type from previous revision. Service type cannot be changed across revisions.",
    'META0006',
  );
  const breaking = await admin.register({ uri: `${h2.url}var-object`, breaking: true });
  t.is(breaking.statusCode, 201);
  t.like(json(breaking)['services'][0], { name: 'VarSvc', ty: 'VirtualObject', revision: 2 });
});

test('HTTP/1.1 endpoints: use_http_11 registers request-response; mismatches are META0014 / META0003', async (t) => {
  const admin = await startAdmin(t);
  await expectError(
    t,
    await admin.register({ uri: noSlash(h1.url) }),
    500,
    `[META0014] [META0014] error when calling '${h1.url}': server possibly supports only HTTP1.1, consider discovery with --use-http1.1.`,
    'META0014',
  );
  await expectError(
    t,
    await admin.register({ uri: `${h2.url}v2/`, use_http_11: true }),
    500,
    `[META0003] [META0003] error when calling '${h2.url}v2/': server possibly supports only HTTP/2, consider discovering without --use-http1.1.\nReason: client error (SendRequest) caused by: invalid HTTP version parsed`,
    'META0003',
  );
  const ok = await admin.register({ uri: h1.url, use_http_11: true });
  t.is(ok.statusCode, 201);
  t.true(json(ok)['services'].every((s: { inactivity_timeout: string }) => s.inactivity_timeout === '0s'));
  const [entry] = json(await admin.call('GET', 'deployments'))['deployments'];
  t.like(entry, { protocol_type: 'RequestResponse', http_version: 'HTTP/1.1' });
});

test('unreachable and 404 endpoints are META0003 discovery failures', async (t) => {
  const admin = await startAdmin(t);
  const port = await freePort();
  await expectError(
    t,
    await admin.register({ uri: `http://127.0.0.1:${port}` }),
    500,
    `[META0003] [META0003] error when calling 'http://127.0.0.1:${port}/': h2 pool connection error: Connection refused (os error 111)`,
    'META0003',
  );
  // The admin port itself answers GET /discover with an empty 404 (§3.3's row).
  const r = await admin.register({ uri: admin.base, use_http_11: true });
  t.is(r.statusCode, 500);
  const { message, restate_code } = json(r);
  t.is(restate_code, 'META0003');
  t.true(
    message.startsWith(
      "[META0003] [META0003] got status code '404'. Make sure the provided URI has the correct path where the Restate SDK endpoint is mounted. Response headers: {",
    ),
    message,
  );
  t.true(message.includes('"content-length": "0"'));
  t.true(message.endsWith('}. Body: '));
});

test('request body errors: 400, 415, 422 as text/plain', async (t) => {
  const admin = await startAdmin(t);
  const cases: Array<[string, string, unknown, Record<string, string>, number, string]> = [
    [
      'POST',
      'deployments',
      'garbage',
      {},
      400,
      'Failed to parse the request body as JSON: expected value at line 1 column 1',
    ],
    [
      'PATCH',
      'services/Greeter',
      'nope',
      {},
      400,
      'Failed to parse the request body as JSON: expected ident at line 1 column 2',
    ],
    [
      'POST',
      'deployments',
      '',
      {},
      400,
      'Failed to parse the request body as JSON: EOF while parsing a value at line 1 column 0',
    ],
    [
      'POST',
      'deployments',
      {},
      {},
      422,
      'Failed to deserialize the JSON body into the target type: data did not match any variant of untagged enum RegisterDeploymentRequest',
    ],
    [
      'POST',
      'deployments',
      { uri: 'not a uri' },
      {},
      422,
      'Failed to deserialize the JSON body into the target type: data did not match any variant of untagged enum RegisterDeploymentRequest',
    ],
    [
      'POST',
      'deployments',
      { uri: h2.url, force: 'yes' },
      {},
      422,
      'Failed to deserialize the JSON body into the target type: data did not match any variant of untagged enum RegisterDeploymentRequest',
    ],
    [
      'POST',
      'deployments',
      { uri: h2.url },
      { 'content-type': 'text/plain' },
      415,
      'Expected request with `Content-Type: application/json`',
    ],
    [
      'PATCH',
      'services/Greeter',
      { public: true },
      { 'content-type': '' },
      415,
      'Expected request with `Content-Type: application/json`',
    ],
    [
      'PATCH',
      'services/Greeter',
      { idempotency_retention: 'bogus' },
      {},
      422,
      'Failed to deserialize the JSON body into the target type: idempotency_retention: failed to parse input in the "friendly" duration format: expected duration to start with a unit value (a decimal integer) after an optional sign, but no integer was found at line 1 column 32',
    ],
    [
      'PATCH',
      'services/Greeter',
      { public: 'yes' },
      {},
      422,
      'Failed to deserialize the JSON body into the target type: public: invalid type: string "yes", expected a boolean at line 1 column 15',
    ],
    [
      'PATCH',
      'deployments/dp_15mkDZVNLJ7axAH3QeEdtQt',
      { uri: 5 },
      {},
      422,
      'Failed to deserialize the JSON body into the target type: data did not match any variant of untagged enum UpdateDeploymentRequest',
    ],
  ];
  for (const [method, path, body, headers, status, text] of cases) {
    const r = await admin.call(method, path, body, headers);
    t.is(r.statusCode, status, `${method} ${path} ${JSON.stringify(body)}`);
    t.true(isText(r));
    t.is(r.body, text);
  }
  const lambda = await admin.register({ arn: 'arn:aws:lambda:eu-central-1:123456789012:function:nope:1' });
  t.is(lambda.statusCode, 500);
  t.is(json(lambda)['restate_code'], 'META0003');
});

test('services: list, get, handlers, openapi and their 404s', async (t) => {
  const admin = await startAdmin(t);
  const id = json(await admin.register({ uri: h2.url }))['id'];
  const list = json(await admin.call('GET', 'services'));
  t.deepEqual(list['services'].map((s: { name: string }) => s.name).sort(), ['Counter', 'Greeter', 'Signup']);
  t.like(json(await admin.call('GET', 'services/Counter')), {
    name: 'Counter',
    ty: 'VirtualObject',
    deployment_id: id,
    revision: 1,
  });
  t.deepEqual(
    json(await admin.call('GET', 'services/Counter/handlers'))['handlers'].map(
      (h: { name: string; ty: string }) => `${h.name}:${h.ty}`,
    ),
    ['add:Exclusive', 'get:Shared'],
  );
  const add = await admin.call('GET', 'services/Counter/handlers/add');
  t.is(
    add.body,
    '{"name":"add","ty":"Exclusive","public":true,"input_description":"application/json","output_description":"application/json","retry_policy":{"max_attempts":null}}',
  );
  await expectError(t, await admin.call('GET', 'services/Nope'), 404, "The requested service 'Nope' does not exist");
  await expectError(
    t,
    await admin.call('GET', 'services/Nope/handlers'),
    404,
    "The requested service 'Nope' does not exist",
  );
  await expectError(
    t,
    await admin.call('GET', 'services/Nope/openapi'),
    404,
    "The requested service 'Nope' does not exist",
  );
  await expectError(
    t,
    await admin.call('GET', 'services/Counter/handlers/nope'),
    404,
    "The requested handler 'nope' on service 'Counter' does not exist",
  );
  await expectError(
    t,
    await admin.call('GET', 'deployments/dp_15mkDZVNLJ7axAH3QeEdtQu'),
    404,
    "The requested deployment 'dp_15mkDZVNLJ7axAH3QeEdtQu' does not exist",
  );
  const badLength = await admin.call('GET', 'deployments/dp_1234567890123456789012');
  t.is(badLength.body, 'Invalid URL: Cannot parse `deployment` with value `dp_1234567890123456789012`: bad length');

  const openapi = await admin.call('GET', 'services/Counter/openapi');
  t.is(openapi.statusCode, 200);
  const doc = json(openapi);
  t.like(doc, {
    openapi: '3.1.0',
    info: { title: 'Counter', version: '1' },
    servers: [{ url: 'http://localhost:8080/', description: 'Restate Ingress URL' }],
  });
  t.truthy(doc['paths']['/restate/call/Counter/{key}/add']);
  t.false(
    Object.keys(json(await admin.call('GET', 'services/Greeter/openapi'))['paths']).some((p) => p.includes('secret')),
  );
});

test('PATCH /services: normalised durations, public, no new revision; re-registration resets', async (t) => {
  const admin = await startAdmin(t);
  await admin.register({ uri: h2.url });
  const patched = await admin.call('PATCH', 'services/Signup', {
    idempotency_retention: '2h',
    inactivity_timeout: 'PT30S',
    journal_retention: '1 hour',
    workflow_completion_retention: '3d',
  });
  t.is(patched.statusCode, 200);
  t.true(
    patched.body.includes(
      '"revision":1,"public":true,"idempotency_retention":"2h","workflow_completion_retention":"3d","journal_retention":"1h","inactivity_timeout":"30s","abort_timeout":"10m"',
    ),
  );
  const hidden = json(await admin.call('PATCH', 'services/Signup', { public: false }));
  t.false(hidden['public']);
  t.true(hidden['handlers'].every((h: { public: boolean }) => !h.public));
  t.is(admin.registry.resolveHandler('Signup', 'run')?.public, false);
  t.true(
    json(await admin.call('PATCH', 'services/Signup', { public: true }))['handlers'].every(
      (h: { public: boolean }) => h.public,
    ),
  );
  for (const noop of [{}, { unknown_field: 1 }])
    t.is(json(await admin.call('PATCH', 'services/Signup', noop))['idempotency_retention'], '2h');
  await expectError(
    t,
    await admin.call('PATCH', 'services/Greeter', { workflow_completion_retention: '2d' }),
    400,
    'modifying retention time for service type Service is unsupported',
  );
  await expectError(
    t,
    await admin.call('PATCH', 'services/Nope', { public: true }),
    404,
    "not found in the schema registry: service with name 'Nope'",
  );
  await admin.register({ uri: h2.url, force: true });
  t.like(json(await admin.call('GET', 'services/Signup')), {
    revision: 2,
    idempotency_retention: '1d',
    inactivity_timeout: '1m',
  });
});

test('PATCH /services retry_policy (a redstate extension): the fields given change, new invocations get them; bad values are 422', async (t) => {
  const admin = await startAdmin(t);
  await admin.register({ uri: h2.url });
  const patched = await admin.call('PATCH', 'services/Greeter', {
    retry_policy: { initial_interval: '2s', max_attempts: 4, on_max_attempts: 'Kill' },
  });
  t.is(patched.statusCode, 200, patched.body);
  t.deepEqual(json(patched)['retry_policy'], {
    initial_interval: '2s',
    exponentiation_factor: 2.0,
    max_attempts: 4,
    max_interval: '1m',
    on_max_attempts: 'Kill',
  });
  t.like(admin.registry.resolveHandler('Greeter', 'greet')?.retryPolicy, {
    initialInterval: 2000,
    maxAttempts: 4,
    onMaxAttempts: 'Kill',
  });
  const unlimited = json(
    await admin.call('PATCH', 'services/Greeter', { retry_policy: { max_attempts: null, exponentiation_factor: 1.5 } }),
  );
  t.like(unlimited['retry_policy'], { initial_interval: '2s', exponentiation_factor: 1.5, max_attempts: null });
  const bad = async (retry_policy: unknown, message: RegExp) => {
    const r = await admin.call('PATCH', 'services/Greeter', { retry_policy });
    t.is(r.statusCode, 422, r.body);
    t.true(isText(r));
    t.regex(r.body, message);
  };
  await bad('fast', /retry_policy: invalid type: string "fast", expected struct RetryPolicy/);
  await bad({ initial_interval: 'soon' }, /retry_policy\.initial_interval: failed to parse/);
  await bad(
    { max_attempts: 0 },
    /retry_policy\.max_attempts: invalid value: integer `0`, expected a positive integer or null/,
  );
  await bad({ exponentiation_factor: 0.5 }, /retry_policy\.exponentiation_factor: invalid value/);
  await bad(
    { on_max_attempts: 'Explode' },
    /retry_policy\.on_max_attempts: invalid value: string "Explode", expected `Pause` or `Kill`/,
  );
  t.is(
    json(await admin.call('GET', 'services/Greeter'))['retry_policy']['exponentiation_factor'],
    1.5,
    'a refused patch changes nothing',
  );
});

test('PATCH /deployments: headers in place, a new URI is rediscovered', async (t) => {
  const admin = await startAdmin(t);
  const id = json(await admin.register({ uri: h2.url }))['id'];
  const same = await admin.call('PATCH', `deployments/${id}`, {});
  t.is(same.statusCode, 200);
  t.like(json(same), { id, uri: h2.url });
  const headers = json(await admin.call('PATCH', `deployments/${id}`, { additional_headers: { 'x-foo': 'bar' } }));
  t.deepEqual(Object.keys(headers).slice(0, 6), [
    'id',
    'uri',
    'protocol_type',
    'http_version',
    'additional_headers',
    'created_at',
  ]);
  t.deepEqual(headers['additional_headers'], { 'x-foo': 'bar' });
  const port = await freePort();
  await expectError(
    t,
    await admin.call('PATCH', `deployments/${id}`, { uri: `http://127.0.0.1:${port}` }),
    500,
    `[META0003] [META0003] error when calling 'http://127.0.0.1:${port}/': h2 pool connection error: Connection refused (os error 111)`,
    'META0003',
  );
  await expectError(
    t,
    await admin.call('PATCH', 'deployments/dp_15mkDZVNLJ7axAH3QeEdtQu', {}),
    404,
    "The requested deployment 'dp_15mkDZVNLJ7axAH3QeEdtQu' does not exist",
  );
  const moved = json(await admin.call('PATCH', `deployments/${id}`, { uri: `${h2.url}v2`, overwrite: true }));
  t.is(moved['uri'], `${h2.url}v2/`);
  t.true(moved['services'][0].handlers.some((h: { name: string }) => h.name === 'extra'));
});

test('health, version, cluster health, redirect, version prefixes, 404 and 405', async (t) => {
  const admin = await startAdmin(t);
  const health = await admin.call('GET', 'health');
  t.is(health.statusCode, 200);
  t.true(isEmpty(health));
  const version = await admin.call('GET', 'version');
  t.is(
    version.body,
    '{"version":"1.7.12","min_admin_api_version":2,"max_admin_api_version":4,"ingress_endpoint":"http://localhost:8080/","features":{"vqueues":false,"vqueue_obsolete_cleanup":false,"vqueues_migration_skip_completed":false,"scoped_promise_table_migration":false,"protocol_v7":true,"invoker_yield":false,"scoped_virtual_objects":false,"kafka_scope":false,"scoped_state_table_migration":false,"unique_random_seeds":false,"vqueues_async_refill":false,"preflight_invocation_termination_retention":false}}',
  );
  t.is(
    (await admin.call('GET', 'cluster-health')).body,
    '{"cluster_name":"localcluster","metadata_cluster_health":{"members":[1]}}',
  );
  const root = await admin.call('GET', '');
  t.is(root.statusCode, 308);
  t.is(root.headers['location'], '/ui/');
  t.true(isEmpty(root));
  for (const path of ['v2/deployments', 'v3/services', 'v4/version', 'v4/health', 'v2/cluster-health'])
    t.is((await admin.call('GET', path)).statusCode, 200, path);
  const v1 = await admin.call('GET', 'v1/version');
  t.is(v1.statusCode, 400);
  t.true(isText(v1));
  t.is(v1.body, 'Unsupported Admin API version V1. This server supports versions between V2 and V4.');
  for (const path of ['v5/version', 'nope', 'services/Greeter/nope/x']) {
    const r = await admin.call('GET', path);
    t.is(r.statusCode, 404, path);
    t.true(isEmpty(r), path);
  }
  const cases: Array<[string, string, string]> = [
    ['OPTIONS', 'deployments', 'GET,HEAD,POST'],
    ['PUT', 'deployments/dp_15mkDZVNLJ7axAH3QeEdtQt', 'GET,HEAD,DELETE,PATCH'],
    ['POST', 'health', 'GET,HEAD'],
    ['DELETE', 'v4/services/Greeter', 'GET,HEAD,PATCH'],
  ];
  for (const [method, path, allow] of cases) {
    const r = await admin.call(method, path);
    t.is(r.statusCode, 405, `${method} ${path}`);
    t.is(r.headers['allow'], allow);
    t.true(isEmpty(r));
  }
});

test('bodies of 32 bytes or more vary on accept-encoding and are gzipped when asked', async (t) => {
  const admin = await startAdmin(t);
  await admin.register({ uri: h2.url });
  const big = await got(`${admin.base}/services`, {
    decompress: false,
    headers: { 'accept-encoding': 'gzip' },
    retry: { limit: 0 },
    responseType: 'buffer',
  });
  t.is(big.headers['content-encoding'], 'gzip');
  t.is(big.headers['vary'], 'accept-encoding');
  const small = await admin.call('GET', 'deployments/dp_15mkDZVNLJ7axAH3QeEdtQu');
  t.is(small.headers['vary'], 'accept-encoding');
  const tiny = await got(`${admin.base}/cluster-health`, {
    headers: { 'accept-encoding': 'identity' },
    retry: { limit: 0 },
  });
  t.is(tiny.headers['content-encoding'], undefined);
});

test('the registry persists, reloads, and merges handler overrides for the invoker', async (t) => {
  const admin = await startAdmin(t);
  const id = json(await admin.register({ uri: h2.url }))['id'];
  const reloaded = await Registry.load(admin.store);
  t.deepEqual(reloaded.listServices(), admin.registry.listServices());
  const retrying = reloaded.resolveHandler('Greeter', 'retrying');
  t.like(retrying, {
    public: true,
    inactivityTimeout: 60_000,
    abortTimeout: 600_000,
    idempotencyRetention: 86_400_000,
    workflowCompletionRetention: 0,
  });
  t.deepEqual(retrying?.retryPolicy, {
    initialInterval: 100,
    exponentiationFactor: 2,
    maxAttempts: 3,
    maxInterval: 200,
    onMaxAttempts: 'Kill',
  });
  t.is(retrying?.deployment.id, id);
  t.is(reloaded.resolveHandler('Greeter', 'secret')?.public, false);
  t.is(reloaded.resolveHandler('Signup', 'run')?.workflowCompletionRetention, 86_400_000);
  t.is(reloaded.resolveHandler('Greeter', 'nope'), undefined);
  t.is(reloaded.resolveHandler('Nope', 'greet'), undefined);
});

test('extra routes share the prefixes and the error funnel; unexpected errors are a logged 500', async (t) => {
  const admin: Admin = await startAdmin(t, (router) => {
    router.get('/extra', () => {
      throw new AdminError(400, 'extra says no');
    });
    router.get('/boom', () => {
      throw new Error('kaput');
    });
  });
  await expectError(t, await admin.call('GET', 'v4/extra'), 400, 'extra says no');
  await expectError(t, await admin.call('GET', 'boom'), 500, 'internal server error: kaput');
  t.is(admin.logged.length, 1);
  t.like(admin.logged[0], {
    level: 'error',
    msg: 'admin request failed',
    'http.request.method': 'GET',
    'url.path': '/boom',
    'http.response.status_code': 500,
    err: { message: 'kaput' },
  });
});
