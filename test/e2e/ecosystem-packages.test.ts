/**
 * Restate's packages beyond the core SDK, driven through the ingress as their READMEs drive
 * them (test/support/services/ecosystem.mjs): a state machine of @restatedev/xstate at
 * `/{machine}/{key}/create|send|snapshot|waitFor`, and zod-typed handlers of
 * @restatedev/restate-sdk-zod. Every answer is the one restate-server 1.7.12 gave to the same
 * service; its OpenAPI documents of the services are test/fixtures/service-openapi/.
 */
import anyTest, { type TestFn } from 'ava';
import { readFileSync } from 'node:fs';
import { stacksPerStore, storeKinds, type Stack } from '../support/stack.js';
import { fixturePath } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;

stacksPerStore(test, { serviceFile: 'ecosystem.mjs' });

const snapshot = (
  value: string,
  context: object,
  extra: { children?: object; tags?: string[]; status?: string } = {},
) =>
  JSON.stringify({
    status: extra.status ?? 'active',
    value,
    historyValue: {},
    context,
    children: extra.children ?? {},
    tags: extra.tags ?? [],
  });

const authorising = (user: string) =>
  snapshot(
    'authorising',
    { user, token: null },
    {
      children: {
        '0.auth.authorising': {
          snapshot: { status: 'active', input: { user }, sent: true },
          src: 'authorise',
          syncSnapshot: false,
        },
      },
      tags: ['busy'],
    },
  );

for (const store of storeKinds) {
  test(`${store}: an XState machine through /{machine}/{key}/send, as @restatedev/xstate's README drives it`, async (t) => {
    const { ingress } = t.context[store]!;
    const key = `${store}-m1`;
    const event = { event: { type: 'AUTH' } };

    // A key never created: the package's own 404, from the handler named `send`.
    const never = await ingress.post(`auth/${store}-never/send`, { json: event });
    t.is(never.statusCode, 404);
    t.is(
      never.body,
      `{"code":404,"message":"No state machine found for this workflow ID. Call 'create' first.","source":"invocation"}`,
    );
    t.regex(String(never.headers['x-restate-id']), /^inv_/);

    const created = await ingress.post(`auth/${key}/create`, { json: { input: { user: 'ada' } } });
    t.is(created.statusCode, 200);
    t.is(created.body, snapshot('idle', { user: 'ada', token: null }));

    // Without a body the handler runs and refuses (the package's TerminalError, so 500).
    const bare = await ingress.get(`auth/${key}/send`);
    t.is(bare.statusCode, 500);
    t.is(bare.body, '{"code":500,"message":"Must provide a request","source":"invocation"}');

    const sent = await ingress.post(`auth/${key}/send`, { json: event });
    t.is(sent.statusCode, 200);
    t.is(sent.body, authorising('ada'));

    // The promise actor resolves, then the delayed transition (`after: 500`) fires.
    const done = snapshot('done', { user: 'ada', token: 'token-for-ada' }, { status: 'done' });
    await waitFor(async () => (await ingress.get(`auth/${key}/snapshot`)).body === done, 10_000);
    t.pass();
  });

  test(`${store}: waitFor with an idempotency key, and a send of the handler named send`, async (t) => {
    const { ingress } = t.context[store]!;
    const key = `${store}-m2`;
    t.is((await ingress.get(`auth/${key}/create`)).statusCode, 200);
    const wait = () =>
      ingress.post(`auth/${key}/waitFor`, {
        json: { condition: 'done', event: { type: 'AUTH' } },
        headers: { 'idempotency-key': `wait-${key}` },
      });
    const done = snapshot('done', { user: 'anonymous', token: 'token-for-anonymous' }, { status: 'done' });
    const first = await wait();
    t.is(first.statusCode, 200);
    t.is(first.body, done);
    // Asked again, the stored answer comes back.
    const again = await wait();
    t.is(again.body, done);
    t.is(again.headers['x-restate-id'], first.headers['x-restate-id']);
    t.truthy(again.headers['idempotency-expires']);

    const other = `${store}-m3`;
    t.is((await ingress.get(`auth/${other}/create`)).statusCode, 200);
    const queued = await ingress.post(`auth/${other}/send/send`, { json: { event: { type: 'AUTH' } } });
    t.is(queued.statusCode, 202);
    t.regex(queued.body, /^\{"invocationId":"inv_[0-9a-zA-Z]+","status":"Accepted"\}$/);
    await waitFor(async () => JSON.parse((await ingress.get(`auth/${other}/snapshot`)).body).status === 'done', 10_000);
  });

  test(`${store}: zod-typed handlers, their validation and the reference's answers`, async (t) => {
    const { ingress } = t.context[store]!;
    const greet = await ingress.post('ZGreeter/greet', { json: { name: 'Ada' } });
    t.is(greet.statusCode, 200);
    t.is(greet.body, '"Hello Ada!"');
    t.is((await ingress.post('ZGreeter/lengths', { json: ['a', 'bcd'] })).body, '[1,3]');
    t.is((await ingress.post('ZGreeter/ready')).body, 'true');

    // A JSON-schema handler refuses an empty body before any invocation exists.
    const empty = await ingress.post('ZGreeter/greet', { headers: { 'content-type': 'application/json' } });
    t.is(empty.statusCode, 400);
    t.is(empty.body, '{"code":400,"message":"input validation error: Empty body not allowed","source":"ingress"}');
    t.is(empty.headers['x-restate-id'], undefined);

    // zod refuses what does not fit the schema, in the SDK.
    const wrong = await ingress.post('ZGreeter/age', { json: { name: 'Ada', age: 'x' } });
    t.is(wrong.statusCode, 400);
    t.is(
      wrong.body,
      '{"code":400,"message":"Failed to deserialize input: [\\n  {\\n    \\"expected\\": \\"number\\",\\n    \\"code\\": \\"invalid_type\\",\\n    \\"path\\": [\\n      \\"age\\"\\n    ],\\n    \\"message\\": \\"Invalid input: expected number, received string\\"\\n  }\\n]","source":"invocation"}',
    );
    t.is(wrong.headers['x-restate-error-source'], 'invocation');

    const key = `${store}-zc`;
    t.is((await ingress.post(`ZCounter/${key}/add`, { json: { by: 2 } })).body, '2');
    const negative = await ingress.post(`restate/call/ZCounter/${key}/add`, { json: { by: -1 } });
    t.is(negative.statusCode, 400);
    t.regex(negative.body, /Too small: expected number to be >0/);
    t.is((await ingress.post(`ZCounter/${key}/get`)).body, '2');
  });

  test(`${store}: handler descriptions from the schemas, and the OpenAPI documents of the reference`, async (t) => {
    const { admin, serviceUrl } = t.context[store]!;
    const expected: Record<string, [string, string]> = {
      'ZGreeter/age': ["JSON 'Person'", 'JSON number'],
      'ZGreeter/greet': ['JSON object', 'JSON string'],
      'ZGreeter/lengths': ['JSON array', 'JSON array'],
      'ZGreeter/plain': ['application/json', 'application/json'],
      'ZGreeter/ready': ['application/json', 'JSON boolean'],
      'ZCounter/add': ['JSON object', 'JSON number'],
      'ZCounter/get': ['application/json', 'JSON number'],
    };
    type Handler = { name: string; input_description: string; output_description: string };
    type Service = { name: string; handlers: Handler[] };
    const described = (services: Service[]) =>
      Object.fromEntries(
        services
          .filter((s) => s.name !== 'auth')
          .flatMap((s) => s.handlers.map((h) => [`${s.name}/${h.name}`, [h.input_description, h.output_description]])),
      );
    // The registration answer (registered again: unchanged, the same answer), the deployment, the services.
    const again = await admin.post('deployments', { json: { uri: serviceUrl } });
    t.deepEqual(described((JSON.parse(again.body) as { services: Service[] }).services), expected);
    const deployment = await admin.get(`deployments/${(JSON.parse(again.body) as { id: string }).id}`);
    t.deepEqual(described((JSON.parse(deployment.body) as { services: Service[] }).services), expected);
    for (const name of ['ZGreeter', 'ZCounter']) {
      const service = JSON.parse((await admin.get(`services/${name}`)).body) as Service;
      t.deepEqual(
        described([service]),
        Object.fromEntries(Object.entries(expected).filter(([k]) => k.startsWith(`${name}/`))),
      );
    }
    const age = JSON.parse((await admin.get('services/ZGreeter/handlers/age')).body) as Handler;
    t.deepEqual([age.input_description, age.output_description], expected['ZGreeter/age']);

    for (const name of ['ZGreeter', 'ZCounter', 'auth']) {
      const doc = JSON.parse((await admin.get(`services/${name}/openapi`)).body) as { servers: unknown };
      const reference = JSON.parse(
        readFileSync(fixturePath('service-openapi', `service-openapi-${name}-1.7.12.json`), 'utf8'),
      ) as { servers: unknown };
      t.deepEqual({ ...doc, servers: reference.servers }, reference, name);
    }
  });
}
