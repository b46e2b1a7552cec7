/**
 * Redis outages answer clearly (issue 9): while a real redis-server is SIGKILLed under a
 * running server, ingress and admin answer 503 with a message saying the store is unavailable
 * (never ioredis internals), health reports it, the log says it once; when Redis is back on the
 * same port and directory, everything answers normally again without a restart of redstate.
 */
import test from 'ava';
import got from 'got';
import { startRedis } from '../support/redis.js';
import { startService } from '../support/sdk-service.js';
import { startRedstate } from '../support/server.js';
import { jsonLines } from '../support/log-lines.js';
import { waitFor } from '../support/wait.js';

const client = (prefixUrl: string) =>
  got.extend({ prefixUrl, throwHttpErrors: false, retry: { limit: 0 }, timeout: { request: 20_000 } });

const IOREDIS_INTERNALS = /max retries|Connection is closed|ECONNREFUSED|Stream isn't writeable|Command timed out/i;

test('SIGKILL of redis-server: 503 with a clear message while it is down, normal answers once it is back', async (t) => {
  const redis = await startRedis();
  const service = await startService('basic.mjs');
  // Writes answer 503 once the store stays away past this bound (certain-answers.test.ts: within it).
  const server = await startRedstate({ redisUrl: redis.url, env: { REDSTATE_STORE_OUTAGE_WAIT: '1000' } });
  const ingress = client(server.ingress);
  const admin = client(server.admin);
  try {
    t.is((await admin.post('deployments', { json: { uri: service.url } })).statusCode, 201);
    t.is((await ingress.post('restate/call/Greeter/greet', { json: 'Ada' })).body, '"hi Ada"');

    await redis.halt({ kill: true });
    const answers = {
      call: await ingress.post('restate/call/Greeter/greet', { json: 'Bob' }),
      send: await ingress.post('restate/send/Greeter/greet', { json: 'Bob' }),
      attach: await ingress.get('restate/attach/inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi'),
      ingressHealth: await ingress.get('restate/health'),
      adminHealth: await admin.get('health'),
      register: await admin.post('deployments', { json: { uri: service.url, force: true } }),
      kill: await admin.patch('invocations/inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi/kill'),
      query: await admin.post('query', {
        json: { query: 'SELECT id FROM sys_invocation' },
        headers: { accept: 'application/json' },
      }),
    };
    for (const [name, res] of Object.entries(answers)) {
      t.is(res.statusCode, 503, `${name}: ${res.body}`);
      t.is(res.headers['content-type'], 'application/json', name);
      t.regex(res.body, /store (is|became) unavailable/, name);
      t.notRegex(res.body, IOREDIS_INTERNALS, name);
    }
    t.like(JSON.parse(answers.call.body), { code: 503, source: 'ingress' });
    t.deepEqual(Object.keys(JSON.parse(answers.adminHealth.body)), ['message', 'restate_code']);
    t.is(answers.call.headers['x-restate-error-source'], 'ingress');

    await redis.resume();
    await waitFor(async () => (await admin.get('health')).statusCode === 200, 15_000);
    t.is((await ingress.get('restate/health')).statusCode, 200);
    t.is((await ingress.post('restate/call/Greeter/greet', { json: 'Cy' })).body, '"hi Cy"');
    t.is(
      (await admin.post('query', { json: { query: 'SELECT 1 AS one' }, headers: { accept: 'application/json' } })).body,
      '{"rows":[{"one":1}]}',
    );
    const log = server.output();
    const lines = jsonLines(log);
    t.is(
      lines.filter(
        (l) =>
          l.level === 'warn' && /^store unavailable: Redis at redis:\/\/127\.0\.0\.1:\d+ cannot be reached/.test(l.msg),
      ).length,
      1,
      log,
    );
    t.true(
      lines.some(
        (l) => l.level === 'info' && /^store available again: Redis at .* answers \(down for [\d.]+ s\)/.test(l.msg),
      ),
      log,
    );
    t.notRegex(log, /Unhandled|uncaught/i);
  } finally {
    await server.stop();
    await service.stop();
    await redis.stop();
  }
});
