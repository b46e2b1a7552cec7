/**
 * The broker sources alone, each on its real server behind a TCP relay that loses what the
 * server sends, then breaks the connection: messages the broker handed out on the way must not
 * be overtaken by the ones after them (Redis: entries in the consumer's pending list, unseen;
 * JetStream: messages waiting for an ack until their ack wait).
 */
import test from 'ava';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { NatsJetStreamSource } from '../../src/subscriptions/sources/nats-jetstream.js';
import { RedisStreamSource } from '../../src/subscriptions/sources/redis-stream.js';
import type { MessageSource, SourceMessage } from '../../src/subscriptions/source.js';
import { startNats } from '../support/nats.js';
import { startRedis } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';

/**
 * What the consumer does (consumer.ts): a failed read rewinds, a handled batch is acknowledged.
 * The positions handed out, `lost` (the read in flight when the connection broke) first, until
 * `count` are or 5 s pass.
 */
async function handedOut(source: MessageSource, lost: Promise<SourceMessage[]>, count: number): Promise<string[]> {
  const positions: string[] = [];
  const take = async (batch: Promise<SourceMessage[]>) => {
    try {
      const messages = await batch;
      positions.push(...messages.map((m) => m.position));
      if (messages.length > 0) await source.ack(messages);
    } catch {
      source.rewind();
    }
  };
  await take(lost);
  const deadline = Date.now() + 5000;
  while (positions.length < count && Date.now() < deadline) await take(source.next(new AbortController().signal));
  return positions;
}

test('Redis Streams: entries of a read whose reply was lost come before the entries added after it', async (t) => {
  const redis = await startRedis();
  const proxy = await startTcpProxy(redis.port);
  const direct = new Redis(redis.url);
  const source = new RedisStreamSource({
    url: `redis://127.0.0.1:${proxy.port}`,
    stream: 'orders',
    group: 'g',
    consumer: 'c',
    startAt: 'earliest',
  });
  const blocked = async () => /blocked_clients:1\r\n/.test(await direct.info('clients'));
  try {
    t.deepEqual(await source.next(), []);
    // The source blocks in XREADGROUP; Redis hands it the first entry, the reply never arrives.
    proxy.holdReplies();
    const lost = source.next();
    await waitFor(blocked, 5000);
    await direct.xadd('orders', '1-1', 'key', 'k', 'value', '"m1"');
    await waitFor(async () => !(await blocked()), 5000);
    proxy.cut();
    await direct.xadd('orders', '2-1', 'key', 'k', 'value', '"m2"');
    t.deepEqual(await handedOut(source, lost, 2), ['1-1', '2-1']);
  } finally {
    await source.close();
    direct.disconnect();
    await proxy.close();
    await redis.stop();
  }
});

test('NATS JetStream: messages of a fetch lost with the connection come before the messages published after it', async (t) => {
  const nats = await startNats();
  const proxy = await startTcpProxy(nats.port);
  const nc = await connect({ servers: nats.url });
  await (await jetstreamManager(nc)).streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
  const js = jetstream(nc);
  const source = new NatsJetStreamSource({
    servers: [`127.0.0.1:${proxy.port}`],
    subject: 'orders.>',
    durable: 'd',
    startAt: 'earliest',
  });
  try {
    t.deepEqual(await source.next(), []);
    // A fetch waits; the server sends it the first message, which never arrives.
    proxy.holdReplies();
    const lost = source.next();
    await sleep(100);
    await js.publish('orders.k', new TextEncoder().encode('"m1"'));
    await waitFor(
      async () => (await (await jetstreamManager(nc)).consumers.info('ORDERS', 'd')).num_ack_pending === 1,
      5000,
    );
    proxy.cut();
    await js.publish('orders.k', new TextEncoder().encode('"m2"'));
    t.deepEqual(await handedOut(source, lost, 2), ['1', '2']);
  } finally {
    await source.close();
    await nc.close();
    await proxy.close();
    await nats.stop();
  }
});
