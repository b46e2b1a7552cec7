/**
 * State that expires (issue 26, restatedev/restate#1853): `state_ttl` per service and per
 * handler, set through PATCH /services/{name}: a key whose state was not written for that long
 * has all its state cleared, once, and only while nobody holds or waits for its lock. Writes
 * (by handlers and by the admin API) start the clock again. Both stores, real SDK services
 * (services/expiring.mjs), a SIGKILL of the server (and redis-server) around the expiries.
 */
import anyTest, { type TestFn } from 'ava';
import { sqlRows, stacksPerStore, storeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;
stacksPerStore(test, { serviceFile: 'expiring.mjs' });

async function patch(stack: Stack, body: unknown): Promise<{ status: number; body: string }> {
  const res = await stack.admin.patch('services/Bag', { json: body });
  return { status: res.statusCode, body: res.body };
}

const entries = async (stack: Stack, key: string) =>
  (
    await sqlRows(
      stack.admin,
      `select key from state where service_name = 'Bag' and service_key = '${key}' order by key`,
    )
  ).map((r) => r['key']);

async function put(stack: Stack, key: string, value: unknown, handler = 'put'): Promise<void> {
  const res = await stack.ingress.post(`restate/call/Bag/${key}/${handler}`, { json: value });
  if (res.statusCode !== 200) throw new Error(`${handler} ${key}: ${res.statusCode} ${res.body}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const store of storeKinds) {
  test.serial(`${store}: state_ttl is set and shown per service and per handler; bad values are refused`, async (t) => {
    const stack = t.context[store]!;
    const set = await patch(stack, { state_ttl: '2s', handlers: { putLong: { state_ttl: '1h' } } });
    t.is(set.status, 200, set.body);
    const shown = JSON.parse((await stack.admin.get('services/Bag')).body) as {
      state_ttl?: string;
      handlers: Array<{ name: string; state_ttl?: string }>;
    };
    t.is(shown.state_ttl, '2s');
    t.is(shown.handlers.find((h) => h.name === 'putLong')?.state_ttl, '1h');
    t.is(shown.handlers.find((h) => h.name === 'put')?.state_ttl, undefined);
    const listed = JSON.parse((await stack.admin.get('services')).body) as {
      services: Array<{ name: string; state_ttl?: string }>;
    };
    t.is(listed.services.find((s) => s.name === 'Bag')?.state_ttl, '2s');

    const plain = await stack.admin.patch('services/Plain', { json: { state_ttl: '1m' } });
    t.is(plain.statusCode, 400);
    t.is(JSON.parse(plain.body).message, "state_ttl is for virtual objects and workflows, and 'Plain' is a service");
    const unknown = await patch(stack, { handlers: { nope: { state_ttl: '1m' } } });
    t.is(unknown.status, 400);
    t.is(JSON.parse(unknown.body).message, "the service 'Bag' has no handler 'nope'");
    const badDuration = await patch(stack, { state_ttl: 'soon' });
    t.is(badDuration.status, 422);
    t.regex(
      badDuration.body,
      /^Failed to deserialize the JSON body into the target type: state_ttl: failed to parse input in the "friendly" duration format/,
    );
    const badHandler = await patch(stack, { handlers: { put: { state_ttl: 5 } } });
    t.is(badHandler.status, 422);
    t.regex(badHandler.body, /handlers\.put\.state_ttl: invalid type: integer `5`, expected a string/);
    t.is(JSON.parse((await stack.admin.get('services/Bag')).body).state_ttl, '2s', 'a refused patch changes nothing');
  });

  test.serial(
    `${store}: expiry clears the whole state once; a write postpones it; a handler's override wins; /query shows when`,
    async (t) => {
      const stack = t.context[store]!;
      t.is((await patch(stack, { state_ttl: '2s', handlers: { putLong: { state_ttl: '1h' } } })).status, 200);
      await put(stack, `${store}-x`, 1);
      await put(stack, `${store}-kept`, 1);
      await put(stack, `${store}-long`, 1, 'putLong');
      const [row] = await sqlRows(
        stack.admin,
        `select expires_at, state_ttl from sys_state_expiry where service_key = '${store}-x'`,
      );
      t.is(row!['state_ttl'], 'PT2S');
      t.true(Math.abs(Date.parse(String(row!['expires_at'])) - (Date.now() + 2000)) < 1500, String(row!['expires_at']));
      const [long] = await sqlRows(
        stack.admin,
        `select state_ttl from sys_state_expiry where service_key = '${store}-long'`,
      );
      t.is(long!['state_ttl'], 'PT3600S');
      // Written again after 1.2 s: the clock starts again.
      await sleep(1200);
      await put(stack, `${store}-kept`, 2);
      await waitFor(async () => (await entries(stack, `${store}-x`)).length === 0, 10_000, 100);
      t.deepEqual(await entries(stack, `${store}-kept`), ['a', 'b', 'c'], 'the write postponed it');
      t.deepEqual(
        await sqlRows(stack.admin, `select service_key from sys_state_expiry where service_key = '${store}-x'`),
        [],
        'its record is gone with it',
      );
      await waitFor(async () => (await entries(stack, `${store}-kept`)).length === 0, 10_000, 100);
      t.deepEqual(await entries(stack, `${store}-long`), ['a'], "the handler's own TTL");
      t.is((await stack.ingress.post(`restate/call/Bag/${store}-x/get`, { json: null })).body, 'null');
    },
  );

  test.serial(
    `${store}: a held lock postpones the expiry until it is free; an admin state write starts the clock too`,
    async (t) => {
      const stack = t.context[store]!;
      t.is((await patch(stack, { state_ttl: '1s' })).status, 200);
      const key = `${store}-held`;
      await put(stack, key, 7);
      const held = stack.ingress.post(`restate/call/Bag/${key}/hold`, { json: 3500 });
      // A second one waits in the key's inbox: waiting counts as holding too.
      const queued = stack.ingress.post(`restate/send/Bag/${key}/hold`, { json: 0 });
      await sleep(2500);
      t.deepEqual(await entries(stack, key), ['a', 'b', 'c'], 'kept while the lock is held');
      t.is((await held).body, '7');
      await queued;
      const freedAt = Date.now();
      await waitFor(async () => (await entries(stack, key)).length === 0, 10_000, 50);
      t.true(Date.now() - freedAt < 3000, `cleared ${Date.now() - freedAt} ms after the lock was free`);

      const admin = `${store}-admin`;
      const res = await stack.admin.post('services/Bag/state', { json: { object_key: admin, new_state: { a: [49] } } });
      t.is(res.statusCode, 202, res.body);
      await waitFor(async () => (await entries(stack, admin)).length === 1, 5000);
      t.is(
        (await sqlRows(stack.admin, `select state_ttl from sys_state_expiry where service_key = '${admin}'`))[0]?.[
          'state_ttl'
        ],
        'PT1S',
      );
      await waitFor(async () => (await entries(stack, admin)).length === 0, 10_000, 100);
    },
  );

  test.serial(`${store}: turned off, pending expiries keep their state; a new revision keeps the TTL`, async (t) => {
    const stack = t.context[store]!;
    t.is((await patch(stack, { state_ttl: '1s', handlers: { putLong: { state_ttl: null } } })).status, 200);
    await put(stack, `${store}-off`, 1);
    t.is((await patch(stack, { state_ttl: '0s' })).status, 200);
    t.is(JSON.parse((await stack.admin.get('services/Bag')).body).state_ttl, undefined);
    await sleep(2500);
    t.deepEqual(await entries(stack, `${store}-off`), ['a', 'b', 'c']);
    t.deepEqual(
      await sqlRows(stack.admin, `select service_key from sys_state_expiry where service_key = '${store}-off'`),
      [],
    );

    t.is((await patch(stack, { state_ttl: '10m', handlers: { putLong: { state_ttl: '1h' } } })).status, 200);
    const again = await stack.admin.post('deployments', { json: { uri: stack.serviceUrl, force: true } });
    t.true(again.statusCode === 200 || again.statusCode === 201, again.body);
    const shown = JSON.parse((await stack.admin.get('services/Bag')).body) as {
      revision: number;
      state_ttl?: string;
      handlers: Array<{ name: string; state_ttl?: string }>;
    };
    t.true(shown.revision > 1);
    t.is(shown.state_ttl, '10m');
    t.is(shown.handlers.find((h) => h.name === 'putLong')?.state_ttl, '1h');
  });

  test.serial(
    `${store}: a SIGKILL of the server${store === 'redis' ? ' and of redis-server' : ''} around the expiries leaves each key whole or cleared, never half`,
    async (t) => {
      const stack = t.context[store]!;
      t.is((await patch(stack, { state_ttl: '3s' })).status, 200);
      const keys = Array.from({ length: 40 }, (_, i) => `${store}-crash-${i}`);
      // Written over some 2.5 s, so their expiries are spread too; the kill comes among them.
      const start = Date.now();
      for (const key of keys) {
        await put(stack, key, 1);
        await sleep(60);
      }
      await sleep(Math.max(0, start + 3800 - Date.now()));
      await stack.redis?.halt({ kill: true });
      await stack.server.kill();
      await stack.redis?.resume();
      await stack.server.restart();
      const seen = new Set<number>();
      let first: number | undefined;
      await waitFor(
        async () => {
          const rows = await sqlRows(
            stack.admin,
            `select service_key, count(*) as n from state where service_name = 'Bag' and service_key like '${store}-crash-%' group by service_key`,
          );
          for (const r of rows) seen.add(Number(r['n']));
          first ??= rows.length;
          return rows.length === 0;
        },
        20_000,
        20,
      );
      t.log(`${store}: ${first} of ${keys.length} keys still held their state after the restart`);
      t.deepEqual(
        [...seen].filter((n) => n !== 3),
        [],
        'never part of a key',
      );
      t.deepEqual(
        await sqlRows(
          stack.admin,
          `select service_key from sys_state_expiry where service_key like '${store}-crash-%'`,
        ),
        [],
      );
      // Written again after its expiry: a new life, expiring once more.
      await put(stack, keys[0]!, 2);
      t.deepEqual(await entries(stack, keys[0]!), ['a', 'b', 'c']);
      await waitFor(async () => (await entries(stack, keys[0]!)).length === 0, 10_000, 100);
    },
  );
}
