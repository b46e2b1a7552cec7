/**
 * Kafka clusters, subscriptions, limit rules and vqueue pause/resume on the admin API
 * (reference-behavior.md §3.7, §3.8): the Koa app in-process with an in-memory registry store,
 * one real SDK endpoint (basic.mjs: Greeter, Counter…) for the subscription sinks.
 */
import test, { type ExecutionContext } from 'ava';
import type { Response } from 'got';
import { createAdminApp } from '../../src/admin/app.js';
import { Registry } from '../../src/registry/registry.js';
import { startService, type StartedService } from '../support/sdk-service.js';
import { memoryStore, serveAdmin, testConfig } from '../support/admin-fixture.js';

let svc: StartedService;

test.before(async () => {
  svc = await startService('basic.mjs');
});
test.after.always(async () => {
  await svc?.stop();
});

const config = testConfig;

async function startAdmin(t: ExecutionContext, existing?: ReturnType<typeof memoryStore>) {
  const mem = existing ?? memoryStore();
  const registry = await Registry.load(mem.store);
  const app = createAdminApp({ registry, config, query: { store: mem.store, registry, config } });
  const { call } = await serveAdmin(t, app);
  return { mem, registry, call };
}

const json = (r: Response<string>) => JSON.parse(r.body) as any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test bodies
const isEmpty = (r: Response<string>) =>
  r.body === '' && r.headers['content-type'] === undefined && r.headers['content-length'] === '0';

function expectError(
  t: ExecutionContext,
  r: Response<string>,
  status: number,
  message: string,
  code: string | null = null,
) {
  t.is(r.statusCode, status, r.body);
  t.is(r.headers['content-type'], 'application/json');
  t.is(r.body, JSON.stringify({ message, restate_code: code }));
}

function expectText(t: ExecutionContext, r: Response<string>, status: number, text: string) {
  t.is(r.statusCode, status, r.body);
  t.is(r.headers['content-type'], 'text/plain; charset=utf-8');
  t.is(r.body, text);
}

const CLUSTER = { name: 'my-cluster', properties: { 'bootstrap.servers': 'localhost:19092' } };
const UNKNOWN_SUB = 'sub_11XHoawrCVqPuXUeJEMvsDe';

test('kafka clusters and subscriptions: the §3.7 rows', async (t) => {
  const { call } = await startAdmin(t);
  t.is((await call('POST', 'deployments', { uri: svc.url })).statusCode, 201);

  for (const prefix of ['', 'v4/']) {
    const subs = await call('GET', `${prefix}subscriptions`);
    t.is(subs.statusCode, 200);
    t.is(subs.body, '{"subscriptions":[]}');
    t.is((await call('GET', `${prefix}kafka-clusters`)).body, '{"clusters":[]}');
  }
  t.is((await call('GET', 'subscriptions?sink=service://Greeter/greet')).body, '{"subscriptions":[]}');
  expectError(
    t,
    await call('GET', `subscriptions/${UNKNOWN_SUB}`),
    404,
    `The requested subscription '${UNKNOWN_SUB}' does not exist`,
  );
  expectText(
    t,
    await call('GET', 'subscriptions/garbage'),
    400,
    'Invalid URL: Cannot parse `subscription` with value `garbage`: bad format',
  );
  expectText(
    t,
    await call('DELETE', 'subscriptions/garbage'),
    400,
    'Invalid URL: Cannot parse `subscription` with value `garbage`: bad format',
  );
  expectError(
    t,
    await call('DELETE', `subscriptions/${UNKNOWN_SUB}`),
    404,
    `not found in the schema registry: subscription with id '${UNKNOWN_SUB}'`,
  );
  expectError(
    t,
    await call('POST', 'subscriptions', { source: 'kafka://my-cluster/my-topic', sink: 'service://Greeter/greet' }),
    400,
    "Kafka cluster 'my-cluster' not found. Available clusters: []",
  );
  expectError(
    t,
    await call('POST', 'subscriptions', { source: 'bogus', sink: 'service://Greeter/greet' }),
    400,
    // The reference's text, listing the schemes this server consumes beyond Kafka (README, "Subscriptions").
    "[META0009] invalid source URI 'bogus': must have a scheme segment, with supported schemes: [kafka, redis-stream, nats].",
    'META0009',
  );
  expectError(
    t,
    await call('POST', 'subscriptions', { source: 'nats://only-a-cluster', sink: 'service://Greeter/greet' }),
    400,
    "[META0009] invalid source URI 'nats://only-a-cluster': the source URI must have the form nats://<cluster_name>/<subject>.",
    'META0009',
  );
  expectError(
    t,
    await call('POST', 'subscriptions', { source: 'nats://nowhere/events.>', sink: 'service://Greeter/greet' }),
    400,
    "Kafka cluster 'nowhere' not found. Available clusters: []",
  );
  expectText(
    t,
    await call('POST', 'subscriptions', {}),
    422,
    'Failed to deserialize the JSON body into the target type: missing field `source` at line 1 column 2',
  );
  expectText(
    t,
    await call('POST', 'subscriptions', 'nope'),
    400,
    'Failed to parse the request body as JSON: expected ident at line 1 column 2',
  );
  const noType = await call('POST', 'subscriptions');
  t.is(noType.statusCode, 415);

  expectError(
    t,
    await call('GET', 'kafka-clusters/my-cluster'),
    404,
    "The requested Kafka cluster 'my-cluster' does not exist",
  );
  expectError(
    t,
    await call('DELETE', 'kafka-clusters/my-cluster'),
    404,
    "not found in the schema registry: kafka cluster named 'my-cluster'",
  );
  expectText(
    t,
    await call('POST', 'kafka-clusters', {}),
    422,
    'Failed to deserialize the JSON body into the target type: missing field `name` at line 1 column 2',
  );

  const created = await call('POST', 'kafka-clusters', CLUSTER);
  t.is(created.statusCode, 201, created.body);
  t.is(created.headers['location'], 'kafka-clusters/my-cluster');
  t.regex(
    created.body,
    /^\{"name":"my-cluster","properties":\{"bootstrap.servers":"localhost:19092"\},"created_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}000000Z"\}$/,
  );
  const createdAt = json(created).created_at as string;
  expectError(
    t,
    await call('POST', 'kafka-clusters', CLUSTER),
    409,
    "kafka cluster 'my-cluster' already exists in schema registry",
  );
  const odd = await call('POST', 'kafka-clusters', { ...CLUSTER, name: 'bad_name!' });
  t.is(odd.statusCode, 201);
  t.is(odd.headers['location'], 'kafka-clusters/bad_name!');
  expectError(
    t,
    await call('POST', 'kafka-clusters', { name: 'c2', properties: {} }),
    400,
    "kafka cluster 'c2' properties must contain either 'bootstrap.servers' or 'metadata.broker.list'",
  );
  t.deepEqual(
    json(await call('GET', 'kafka-clusters')).clusters.map((c: { name: string }) => c.name),
    ['my-cluster', 'bad_name!'],
  );
  t.is(
    (await call('GET', 'kafka-clusters/my-cluster?include_subscriptions=true')).body,
    `{"name":"my-cluster","properties":{"bootstrap.servers":"localhost:19092"},"created_at":"${createdAt}","subscriptions":[]}`,
  );

  const sub = await call('POST', 'subscriptions', {
    source: 'kafka://my-cluster/my-topic',
    sink: 'service://Counter/add',
  });
  t.is(sub.statusCode, 201, sub.body);
  const id = json(sub).id as string;
  t.regex(id, /^sub_1[0-9A-Za-z]{22}$/);
  t.is(sub.headers['location'], `subscriptions/${id}`);
  const subBody = `{"id":"${id}","source":"kafka://my-cluster/my-topic","sink":"service://Counter/add","options":{"group.id":"${id}","client.id":"restate"}}`;
  t.is(sub.body, subBody);
  for (const sink of ['service://Nope/add', 'service://Counter/nope']) {
    expectError(
      t,
      await call('POST', 'subscriptions', { source: 'kafka://my-cluster/my-topic', sink }),
      400,
      `[META0009] invalid sink URI '${sink}': cannot find service/handler specified in the sink URI.`,
      'META0009',
    );
  }
  t.is((await call('GET', 'subscriptions')).body, `{"subscriptions":[${subBody}]}`);
  t.is((await call('GET', 'subscriptions?sink=service://Counter/add')).body, `{"subscriptions":[${subBody}]}`);
  t.is((await call('GET', 'subscriptions?source=kafka://other/t')).body, '{"subscriptions":[]}');
  t.is((await call('GET', `subscriptions/${id}`)).body, subBody);
  t.is(
    (await call('GET', 'kafka-clusters/my-cluster?include_subscriptions=true')).body,
    `{"name":"my-cluster","properties":{"bootstrap.servers":"localhost:19092"},"created_at":"${createdAt}","subscriptions":[${subBody}]}`,
  );
  // Without the parameter the list is there, empty (restate-server 1.7.12; the CLI's `kafka-clusters edit|patch` read it).
  t.is(
    (await call('GET', 'kafka-clusters/my-cluster')).body,
    `{"name":"my-cluster","properties":{"bootstrap.servers":"localhost:19092"},"created_at":"${createdAt}","subscriptions":[]}`,
  );
  expectError(
    t,
    await call('DELETE', 'kafka-clusters/my-cluster'),
    409,
    `Removing the kafka cluster 'my-cluster' leads to subscription '${id}' being orphan. Remove the subscription first, or use the 'force' flag.`,
  );
  const patched = await call('PATCH', 'kafka-clusters/my-cluster', {
    properties: { 'bootstrap.servers': 'localhost:19093' },
  });
  t.is(patched.statusCode, 200);
  t.is(
    patched.body,
    `{"name":"my-cluster","properties":{"bootstrap.servers":"localhost:19093"},"created_at":"${createdAt}"}`,
  );
  // A cluster's group.id and client.id stand in for the defaults (as restate-server 1.7.12 fills them in).
  await call('PATCH', 'kafka-clusters/bad_name!', {
    properties: { 'bootstrap.servers': 'localhost:19092', 'group.id': 'g', 'client.id': 'c' },
  });
  const own = await call('POST', 'subscriptions', { source: 'kafka://bad_name!/t', sink: 'service://Counter/add' });
  t.deepEqual(json(own).options, { 'group.id': 'g' });
  t.is((await call('DELETE', `subscriptions/${json(own).id as string}`)).statusCode, 202);

  const delSub = await call('DELETE', `subscriptions/${id}`);
  t.is(delSub.statusCode, 202);
  t.true(isEmpty(delSub));
  t.true(isEmpty(await call('DELETE', 'kafka-clusters/my-cluster')));
  t.is((await call('DELETE', 'kafka-clusters/bad_name!')).statusCode, 202);
  t.is((await call('GET', 'kafka-clusters')).body, '{"clusters":[]}');
  t.is((await call('GET', 'subscriptions')).body, '{"subscriptions":[]}');
});

test('kafka cluster delete with force removes its subscriptions', async (t) => {
  const { call } = await startAdmin(t);
  t.is((await call('POST', 'deployments', { uri: svc.url })).statusCode, 201);
  t.is((await call('POST', 'kafka-clusters', CLUSTER)).statusCode, 201);
  t.is(
    (await call('POST', 'subscriptions', { source: 'kafka://my-cluster/t', sink: 'service://Greeter/greet' }))
      .statusCode,
    201,
  );
  t.is((await call('DELETE', 'kafka-clusters/my-cluster?force=true')).statusCode, 202);
  t.is((await call('GET', 'subscriptions')).body, '{"subscriptions":[]}');
});

test('limit rules: the §3.8 rows, and sys_rules', async (t) => {
  const { call } = await startAdmin(t);
  const put = await call('PUT', 'limits/rules', [
    { pattern: 'sc2', limits: { concurrency: 1 }, description: 'one at a time' },
  ]);
  t.is(put.statusCode, 200, put.body);
  const first = json(put)[0];
  t.is(
    put.body,
    `[{"pattern":"sc2","limits":{"concurrency":1},"description":"one at a time","disabled":false,"version":1,"last_modified_millis_since_epoch":${first.last_modified_millis_since_epoch}}]`,
  );
  t.true(Math.abs(first.last_modified_millis_since_epoch - Date.now()) < 10_000);

  expectError(
    t,
    await call('PUT', 'limits/rules', [
      { pattern: 'sc2', limits: { concurrency: 1 }, precondition: { type: 'does_not_exist' } },
    ]),
    409,
    'rule precondition DoesNotExist for pattern sc2 failed (actual version: Some(v1))',
  );
  expectError(
    t,
    await call('PUT', 'limits/rules', [
      { pattern: 'sc2', limits: { concurrency: 1 }, precondition: { type: 'matches', version: 99 } },
    ]),
    409,
    'rule precondition Matches(v99) for pattern sc2 failed (actual version: Some(v1))',
  );
  expectText(
    t,
    await call('PUT', 'limits/rules', '[{"pattern":"bad pattern!","limits":{"concurrency":1}}]'),
    422,
    'Failed to deserialize the JSON body into the target type: [0].pattern: invalid component: value contains characters outside the allowed set [a-zA-Z0-9_.-] at line 1 column 26',
  );
  expectText(
    t,
    await call('PUT', 'limits/rules', '[{"pattern":"sc2","limits":{"concurrency":0}}]'),
    422,
    'Failed to deserialize the JSON body into the target type: [0].limits.concurrency: invalid value: integer `0`, expected a nonzero u32 at line 1 column 43',
  );

  const star = await call('PUT', 'limits/rules', [{ pattern: '*', limits: { concurrency: 5 } }]);
  t.regex(
    star.body,
    /^\[\{"pattern":"\*","limits":\{"concurrency":5\},"disabled":false,"version":1,"last_modified_millis_since_epoch":\d+\}\]$/,
  );
  // A change of the limits bumps the version; a matching precondition passes.
  const bumped = await call('PUT', 'limits/rules', [
    { pattern: 'sc2', limits: { concurrency: 2 }, precondition: { type: 'matches', version: 1 } },
  ]);
  t.is(bumped.statusCode, 200, bumped.body);
  t.is(json(bumped)[0].version, 2);

  const rows = await call(
    'POST',
    'query',
    {
      query:
        'SELECT pattern, concurrency, description, disabled, version, last_modified FROM sys_rules ORDER BY pattern',
    },
    {
      accept: 'application/json',
    },
  );
  t.is(rows.statusCode, 200, rows.body);
  const got = json(rows).rows;
  t.is(got.length, 2);
  t.like(got[0], { pattern: '*', concurrency: 5, disabled: false, version: 1 });
  // A PUT carries the whole rule: the description went away; JSON rows leave NULL columns out.
  t.like(got[1], { pattern: 'sc2', concurrency: 2, disabled: false, version: 2 });
  t.false('description' in got[1]);
  t.regex(got[1].last_modified, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  expectError(
    t,
    await call('POST', 'limits/rules/bulk-delete', [{ pattern: 'sc2', expected_version: 99 }]),
    409,
    'rule precondition Matches(v99) for pattern sc2 failed (actual version: Some(v2))',
  );
  const del = await call('POST', 'limits/rules/bulk-delete', [{ pattern: 'sc2' }]);
  t.is(del.statusCode, 200);
  t.is(del.body, '["sc2"]');
  t.is((await call('POST', 'limits/rules/bulk-delete', [{ pattern: 'nonexistent' }])).body, '[]');
  t.is((await call('POST', 'limits/rules/bulk-delete', [{ pattern: '*' }])).body, '["*"]');
});

test('vqueue pause/resume: 202 for well-formed ids, JSON 400 otherwise, GET 405', async (t) => {
  const { call } = await startAdmin(t);
  for (const id of ['vq_15XrKI6E8WY65oc96raHL64V3Bk03Ao6MS', 'vq_15XrKI6E8WY65oc96raHL64V3Bk03Ao6MT']) {
    for (const action of ['pause', 'resume']) {
      const r = await call('POST', `vqueues/${id}/${action}`);
      t.is(r.statusCode, 202);
      t.true(isEmpty(r));
    }
  }
  expectError(
    t,
    await call('POST', 'vqueues/vq_nope/pause'),
    400,
    "The request field 'vqueue_id' is invalid. Reason: unrecognized codec version",
  );
  expectError(
    t,
    await call('POST', 'vqueues/garbage/resume'),
    400,
    "The request field 'vqueue_id' is invalid. Reason: bad format",
  );
  const get = await call('GET', 'vqueues/vq_15XrKI6E8WY65oc96raHL64V3Bk03Ao6MS/pause');
  t.is(get.statusCode, 405);
  t.is(get.headers['allow'], 'POST');
  t.true(isEmpty(get));
});

test('clusters, subscriptions and rules survive a registry reload; old documents still load', async (t) => {
  const first = await startAdmin(t);
  t.is((await first.call('POST', 'deployments', { uri: svc.url })).statusCode, 201);
  t.is((await first.call('POST', 'kafka-clusters', CLUSTER)).statusCode, 201);
  const sub = json(
    await first.call('POST', 'subscriptions', { source: 'kafka://my-cluster/t', sink: 'service://Greeter/greet' }),
  );
  t.is(
    (
      await first.call('PUT', 'limits/rules', [
        { pattern: 'scope1/*', limits: { concurrency: 3 }, description: 'test' },
      ])
    ).statusCode,
    200,
  );

  const second = await startAdmin(t, first.mem);
  t.is((await second.call('GET', `subscriptions/${sub.id}`)).statusCode, 200);
  t.is((await second.call('GET', 'kafka-clusters')).body, (await first.call('GET', 'kafka-clusters')).body);
  t.like(second.registry.getExtras().rules[0], {
    pattern: 'scope1/*',
    concurrency: 3,
    description: 'test',
    version: 1,
  });
  t.is(second.registry.listDeployments().length, 1);

  // A document written before these sections existed.
  const old = memoryStore();
  const doc = structuredClone(first.mem.box.doc) as Record<string, unknown>;
  delete doc['kafkaClusters'];
  delete doc['subscriptions'];
  delete doc['rules'];
  old.box.doc = doc;
  const third = await startAdmin(t, old);
  t.is(third.registry.listDeployments().length, 1);
  t.is((await third.call('GET', 'kafka-clusters')).body, '{"clusters":[]}');
  // A later deployment change keeps the extras in the document.
  t.is((await third.call('POST', 'kafka-clusters', CLUSTER)).statusCode, 201);
  t.is(
    (await third.call('DELETE', `deployments/${third.registry.listDeployments()[0]!.id}?force=true`)).statusCode,
    202,
  );
  t.is(((old.box.doc as { kafkaClusters: unknown[] }).kafkaClusters ?? []).length, 1);
});
