/**
 * Subscriptions from NATS JetStream (`nats://{cluster}/{subject}`), end to end: a real
 * `nats-server -js`, the server process (embedded store) and an SDK service. 1000 messages
 * over 10 keys reach the `Log` virtual object once each, in key order; also with two SIGKILLs
 * of the server and a restart of nats-server while the messages flow.
 */
import { connect, headers as natsHeaders } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import test from 'ava';
import { startNats, type RunningNats } from '../support/nats.js';
import { sqlRows, startStack, type Stack } from '../support/stack.js';
import {
  bodyOf,
  expectEveryMessageOnceInOrder,
  keyOf,
  killServer,
  MESSAGES,
  publishAll,
  subscribe,
} from '../support/streaming.js';

/** A stream `ORDERS` over `orders.>`; each message carries its key in the header `key` and a `Nats-Msg-Id`, so a resend after a reconnect is stored once. */
async function producer(nats: RunningNats) {
  const nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  await (await jetstreamManager(nc)).streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
  const js = jetstream(nc);
  return {
    async publish(i: number) {
      const h = natsHeaders();
      h.set('key', keyOf(i));
      h.set('source', 'test');
      for (;;) {
        try {
          await js.publish(`orders.${keyOf(i)}`, new TextEncoder().encode(bodyOf(i)), {
            headers: h,
            msgID: `m${i}`,
            timeout: 2000,
          });
          return;
        } catch {
          // nats-server is restarting: publish again (the message id makes it once).
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    },
    close: () => nc.close(),
  };
}

async function withStack(run: (stack: Stack, nats: RunningNats) => Promise<void>): Promise<void> {
  const nats = await startNats();
  const stack = await startStack('embedded', { serviceFile: 'subscriptions.mjs' });
  try {
    const cluster = await stack.admin.post('kafka-clusters', {
      json: { name: 'local', properties: { 'bootstrap.servers': nats.url } },
    });
    if (cluster.statusCode !== 201) throw new Error(`cluster: ${cluster.statusCode} ${cluster.body}`);
    await run(stack, nats);
  } finally {
    await stack.stop();
    await nats.stop();
  }
}

test.serial(
  'every message of a JetStream subject invokes the handler once, in key order, with the message headers',
  async (t) => {
    await withStack(async (stack, nats) => {
      const p = await producer(nats);
      const id = await subscribe(stack.admin, 'nats://local/orders.>');
      await publishAll((i) => p.publish(i), 1000);
      const logs = await expectEveryMessageOnceInOrder(t, stack, 60_000);
      await p.close();

      const headers = logs.get('k9')!.headers;
      t.is(headers['kafka.key'], Buffer.from('k9').toString('base64'));
      t.is(headers['kafka.topic'], 'orders.k9');
      t.is(headers['kafka.partition'], 'ORDERS');
      t.is(headers['restate.subscription.id'], id);
      t.is(headers['kafka.offset'], String(MESSAGES));
      t.is(headers['source'], 'test');
      const [progress] = await sqlRows(stack.admin, `SELECT * FROM sys_subscription_progress WHERE id = '${id}'`);
      t.like(progress, { source: 'nats://local/orders.>', status: 'running', delivered: MESSAGES, lag: 0 });
    });
  },
);

test.serial('SIGKILLs of the server and a restart of nats-server lose no message and run none twice', async (t) => {
  await withStack(async (stack, nats) => {
    const p = await producer(nats);
    await subscribe(stack.admin, 'nats://local/orders.>');
    await publishAll((i) => p.publish(i), 6000, [
      killServer(stack, 1500),
      { atMs: 3000, what: 'restart nats-server', run: () => nats.restart() },
      killServer(stack, 4500),
    ]);
    await expectEveryMessageOnceInOrder(t, stack, 90_000);
    await p.close();
  });
});
