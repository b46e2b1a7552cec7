/**
 * Log lines of the server process with REDSTATE_LOG_FORMAT=json: every line parses, and the
 * lines an operator needs carry Restate's field names: start-up, deployment registration and
 * its failure, admin 5xx, and a Redis outage (one line when it starts, one when it ends).
 */
import test from 'ava';
import got from 'got';
import { jsonLines, type LogLine } from '../support/log-lines.js';
import { startRedis } from '../support/redis.js';
import { startService } from '../support/sdk-service.js';
import { startRedstate } from '../support/server.js';
import { waitFor } from '../support/wait.js';

const JSON_LOGS = { REDSTATE_LOG_FORMAT: 'json' };
const client = (prefixUrl: string) => got.extend({ prefixUrl, throwHttpErrors: false, retry: { limit: 0 } });

test('every line is JSON; start-up, registration, its failure and admin 5xx carry their fields', async (t) => {
  const service = await startService('basic.mjs');
  const server = await startRedstate({ env: JSON_LOGS });
  t.teardown(async () => {
    await server.stop();
    await service.stop();
  });
  const admin = client(server.admin);
  const ingress = client(server.ingress);

  const failed = await admin.post('deployments', { json: { uri: 'http://127.0.0.1:1/' } });
  t.is(failed.statusCode, 500);
  t.is((await admin.post('deployments', { json: { uri: service.url } })).statusCode, 201);
  const linesBeforeCalls = jsonLines(server.output()).length;
  for (let i = 0; i < 5; i++) t.is((await ingress.post('restate/call/Greeter/greet', { json: 'Ada' })).statusCode, 200);

  const output = server.output().trim();
  const lines = jsonLines(output);
  t.is(lines.length, output.split('\n').length, `every line is a JSON object:\n${output}`);
  for (const line of lines) {
    t.is(typeof line.time, 'string');
    t.true(['fatal', 'error', 'warn', 'info', 'debug', 'trace'].includes(line.level), line.level);
  }
  const find = (msg: string): LogLine => {
    const line = lines.find((l) => l.msg === msg);
    if (!line) throw new Error(`no line '${msg}' in:\n${output}`);
    return line;
  };

  const ready = lines.find((l) => /^ingress on :\d+, admin on :\d+, node on :\d+$/.test(l.msg));
  t.like(ready, {
    level: 'info',
    ports: { ingress: Number(new URL(server.ingress).port), admin: Number(new URL(server.admin).port) },
  });
  t.is(typeof ready?.['startup_ms'], 'number');
  t.like(find(`store: embedded at ${lines[0]?.['location']}`), { level: 'info', store: 'embedded' });

  t.like(find('deployment registration failed'), {
    level: 'warn',
    'restate.deployment.address': 'http://127.0.0.1:1/',
    'restate.error.code': 'META0003',
  });
  t.regex(String(find('deployment registration failed')['error.message']), /^\[META0003\].*Connection refused/);
  t.like(find('admin request failed'), {
    level: 'error',
    'http.request.method': 'POST',
    'url.path': '/deployments',
    'http.response.status_code': 500,
    'restate.error.code': 'META0003',
  });
  const registered = find('deployment registered');
  t.like(registered, { level: 'info', 'restate.deployment.address': service.url, created: true });
  t.regex(String(registered['restate.deployment.id']), /^dp_/);
  t.deepEqual(registered['services'], ['Greeter', 'Counter', 'Signup']);

  t.is(lines.length, linesBeforeCalls, 'successful invocations log nothing at info');
});

test('a Redis outage is one line when it starts and one when it ends', async (t) => {
  const redis = await startRedis();
  const server = await startRedstate({ redisUrl: redis.url, env: JSON_LOGS });
  t.teardown(async () => {
    await server.stop();
    await redis.stop();
  });
  const lines = (msg: RegExp) => jsonLines(server.output()).filter((l) => msg.test(l.msg));
  const lost = /^store unavailable/;
  const back = /^store available again/;

  await redis.halt();
  await waitFor(async () => lines(lost).length > 0, 10_000);
  // ioredis keeps retrying (50 ms, doubling up to 2 s) and fails each attempt: still one line.
  await new Promise((r) => setTimeout(r, 1500));
  await redis.resume();
  await waitFor(async () => lines(back).length > 0, 15_000);

  t.is(lines(lost).length, 1);
  t.like(lines(lost)[0], { level: 'warn', store: 'redis' });
  t.true(lines(lost)[0]!.msg.includes(redis.url), 'the line names the Redis');
  t.is(lines(back).length, 1);
  t.like(lines(back)[0], { level: 'info', store: 'redis' });
  t.true(Number(lines(back)[0]!['outage_ms']) >= 1500);
  // The store works again.
  t.is((await fetch(`${server.admin}/deployments`)).status, 200);
  const metrics = await (await fetch(`${server.node}/metrics`)).text();
  t.regex(metrics, /^redstate_store_connected\{backend="redis"\} 1$/m);
});

test('an attempt failure logs its retry, and exhausted retries log the end, with the invocation fields', async (t) => {
  const service = await startService('durable.mjs');
  const server = await startRedstate({ env: JSON_LOGS });
  t.teardown(async () => {
    await server.stop();
    await service.stop();
  });
  t.is((await client(server.admin).post('deployments', { json: { uri: service.url } })).statusCode, 201);
  const ingress = client(server.ingress);
  const flaky = await ingress.post('restate/call/Durable/flaky', { json: { tag: 'logs', times: 2 } });
  t.is(flaky.statusCode, 200);
  const killed = await ingress.post('restate/call/Durable/alwaysFailKill', { json: null });
  t.is(killed.statusCode, 500);

  const linesOf = (id: string, msg: string) =>
    jsonLines(server.output()).filter((l) => l['restate.invocation.id'] === id && l.msg === msg);
  const flakyId = String(flaky.headers['x-restate-id']);
  const retries = linesOf(flakyId, 'attempt failed, retrying');
  t.is(retries.length, 2, server.output());
  t.like(retries[0], {
    level: 'warn',
    'rpc.service': 'Durable',
    'rpc.method': 'flaky',
    'restate.invocation.target': 'Durable/flaky',
    'restate.error.code': 'RT0007',
    'error.message': 'flaky failure attempt 1',
    retry_count: 1,
  });
  t.is(typeof retries[0]!['retry_in_ms'], 'number');
  const killedId = String(killed.headers['x-restate-id']);
  await waitFor(async () => linesOf(killedId, 'attempt failed, invocation failed for good').length === 1, 10_000);
  t.is(linesOf(killedId, 'attempt failed, retrying').length, 2, 'two retries before the third attempt kills it');
  t.is(
    jsonLines(server.output()).filter((l) => l.level === 'info' && l['restate.invocation.id'] === flakyId).length,
    0,
    'no info line for an invocation that succeeds',
  );
});
