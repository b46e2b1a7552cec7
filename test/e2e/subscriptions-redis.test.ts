/**
 * Subscriptions from Redis Streams (`redis-stream://{stream}`, the store's own Redis), end to
 * end: a real redis-server (store and broker at once), the server process and an SDK service.
 * 1000 messages over 10 keys reach the `Log` virtual object once each, in key order; also with
 * two SIGKILLs of the server and a restart of the broker while the messages flow (a second
 * redis-server, `redis-stream://{cluster}/{stream}`, and the store's own).
 */
import test from 'ava';
import { startRedis } from '../support/redis.js';
import { sqlRows, startStack, type Stack } from '../support/stack.js';
import {
  expectEveryMessageOnceInOrder,
  killServer,
  MESSAGES,
  publishAll,
  streamProducer,
  subscribe,
} from '../support/streaming.js';

async function withStack(run: (stack: Stack) => Promise<void>): Promise<void> {
  const stack = await startStack('redis', { serviceFile: 'subscriptions.mjs' });
  try {
    await run(stack);
  } finally {
    await stack.stop();
  }
}

test.serial(
  'every message of a Redis stream invokes the handler once, in key order, with the message headers',
  async (t) => {
    await withStack(async (stack) => {
      const id = await subscribe(stack.admin, 'redis-stream://orders');
      const p = streamProducer(stack.redis!.url, 'orders');
      await publishAll((i) => p.publish(i), 1000);
      const logs = await expectEveryMessageOnceInOrder(t, stack, 60_000);
      await p.close();

      const headers = logs.get('k9')!.headers;
      t.is(headers['kafka.key'], Buffer.from('k9').toString('base64'));
      t.is(headers['kafka.topic'], 'orders');
      t.is(headers['kafka.partition'], 'orders');
      t.regex(headers['kafka.offset'] ?? '', /^\d+-1000$/);
      t.is(headers['kafka.timestamp'], headers['kafka.offset']!.split('-')[0]);
      t.is(headers['restate.subscription.id'], id);
      t.is(headers['source'], 'test');

      const [progress] = await sqlRows(stack.admin, `SELECT * FROM sys_subscription_progress WHERE id = '${id}'`);
      t.like(progress, {
        source: 'redis-stream://orders',
        sink: 'service://Log/append',
        status: 'running',
        delivered: MESSAGES,
        lag: 0,
      });
      const [row] = await sqlRows(
        stack.admin,
        `SELECT invoked_by, invoked_by_subscription_id FROM sys_invocation WHERE target_service_key = 'k3' AND target_handler_name = 'append' LIMIT 1`,
      );
      t.deepEqual(row, { invoked_by: 'subscription', invoked_by_subscription_id: id });
    });
  },
);

test.serial(
  'SIGKILLs of the server and a restart of the broker (another Redis, named by a cluster) lose no message and run none twice',
  async (t) => {
    await withStack(async (stack) => {
      const broker = await startRedis();
      try {
        const cluster = await stack.admin.post('kafka-clusters', {
          json: { name: 'bus', properties: { 'bootstrap.servers': broker.url } },
        });
        t.is(cluster.statusCode, 201);
        await subscribe(stack.admin, 'redis-stream://bus/orders');
        const p = streamProducer(broker.url, 'orders');
        await publishAll((i) => p.publish(i), 6000, [
          killServer(stack, 1500),
          { atMs: 3000, what: 'restart the broker', run: () => broker.restart() },
          killServer(stack, 4500),
        ]);
        await expectEveryMessageOnceInOrder(t, stack, 90_000);
        await p.close();
      } finally {
        await broker.stop();
      }
    });
  },
);

// The store's own Redis restarted mid-stream. It once failed in about twenty runs; the cause
// found: ioredis resent a read whose reply the restart had lost, so the entries Redis had
// handed out with it came after later ones of their key (fixed in sources/redis-stream.ts;
// subscriptions-lost-replies.test.ts loses such a reply on purpose).
test.serial(
  "SIGKILLs of the server and a restart of the store's redis-server, which is the broker too, lose no message and run none twice",
  async (t) => {
    await withStack(async (stack) => {
      await subscribe(stack.admin, 'redis-stream://orders');
      const p = streamProducer(stack.redis!.url, 'orders');
      await publishAll((i) => p.publish(i), 6000, [
        killServer(stack, 1500),
        { atMs: 3000, what: 'restart redis-server', run: () => stack.redis!.restart() },
        killServer(stack, 4500),
      ]);
      await expectEveryMessageOnceInOrder(t, stack, 90_000);
      await p.close();
    });
  },
);

test.serial('a deleted subscription stops consuming', async (t) => {
  await withStack(async (stack) => {
    const id = await subscribe(stack.admin, 'redis-stream://orders');
    t.is((await stack.admin.delete(`subscriptions/${id}`)).statusCode, 202);
    // The engine looks at the registry every second.
    await new Promise((r) => setTimeout(r, 1500));
    const p = streamProducer(stack.redis!.url, 'orders');
    await p.publish(0);
    await new Promise((r) => setTimeout(r, 1500));
    await p.close();
    const res = await stack.ingress.post('Log/k0/get');
    t.deepEqual(JSON.parse(res.body), { items: [], headers: {} });
    t.deepEqual(await sqlRows(stack.admin, 'SELECT id FROM sys_subscription_progress'), []);
  });
});
