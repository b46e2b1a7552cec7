#!/usr/bin/env node
// Subscription throughput: messages from a Redis stream (the store's own Redis, appendfsync
// always) into a no-op virtual-object handler over 100 keys, and the end-to-end lag of each
// message (Redis took it → the handler ran; the entry id's time against the handler's clock).
//
//   npm run build && flock /tmp/redstate-bench.lock node scripts/bench-subscriptions.mjs [--messages 20000] [--keys 100] [--rate 0]
//
// --rate 0 writes every message at once (throughput; the lag then is mostly queueing);
// --rate N writes N messages per second (the lag of a stream the server keeps up with).
//
// Uses the test support (dist/test/support) to start redis-server, the SDK service and the server.
import { Redis } from 'ioredis';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const support = (f) => import(path.join(ROOT, 'dist/test/support', f));
const { startRedis } = await support('redis.js');
const { startRedstate } = await support('server.js');
const { startService } = await support('sdk-service.js');

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const MESSAGES = opt('messages', 20_000);
const KEYS = opt('keys', 100);
const RATE = opt('rate', 0);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

const redis = await startRedis();
const client = new Redis(redis.url);
let service;
let server;
try {
  // Started inside the try, so a failed start leaves no process behind.
  service = await startService(path.join(ROOT, 'test/support/services/subscriptions.mjs'));
  server = await startRedstate({ redisUrl: redis.url });
  const post = (url, body) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if ((await post(`${server.admin}/deployments`, { uri: service.url })).status !== 201)
    throw new Error('registration failed');
  const sub = await post(`${server.admin}/subscriptions`, {
    source: 'redis-stream://bench',
    sink: 'service://Noop/take',
    options: { 'auto.offset.reset': 'earliest' },
  });
  if (sub.status !== 201) throw new Error(`subscription refused: ${await sub.text()}`);

  // Measured from a running consumer: the engine picks a new subscription up within a second.
  const { id } = await sub.json();
  const progressQuery = { query: `SELECT status FROM sys_subscription_progress WHERE id = '${id}'` };
  while (
    (
      await (
        await fetch(`${server.admin}/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify(progressQuery),
        })
      ).json()
    ).rows.length === 0
  )
    await sleep(100);
  await sleep(500);

  const lags = async () => (await (await fetch(`http://127.0.0.1:${service.countsPort}/counts`)).json()).lags;
  const started = Date.now();
  // Written in pipelined chunks, as fast as Redis takes them or at --rate.
  const chunk = RATE > 0 ? Math.max(1, Math.round(RATE / 20)) : 500;
  for (let i = 0; i < MESSAGES; i += chunk) {
    const p = client.pipeline();
    for (let j = i; j < Math.min(MESSAGES, i + chunk); j++) p.xadd('bench', '*', 'key', `k${j % KEYS}`, 'value', '1');
    await p.exec();
    if (RATE > 0) await sleep(Math.max(0, started + ((i + chunk) * 1000) / RATE - Date.now()));
  }
  const written = Date.now();
  let seen = [];
  while ((seen = await lags()).length < MESSAGES) {
    if (Date.now() - started > 600_000) throw new Error(`only ${seen.length} of ${MESSAGES} handled in 10 min`);
    await sleep(250);
  }
  const done = Date.now();
  const sorted = [...seen].sort((a, b) => a - b);
  const result = {
    messages: MESSAGES,
    keys: KEYS,
    rate: RATE || 'burst',
    write_s: (written - started) / 1000,
    total_s: (done - started) / 1000,
    messages_per_s: Math.round(MESSAGES / ((done - started) / 1000)),
    lag_ms: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] },
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  client.disconnect();
  await server?.stop();
  await service?.stop();
  await redis.stop();
}
