/**
 * The Redis Streams source alone, on a real redis-server behind a TCP relay: a read that Redis
 * ran but whose reply was lost with the connection must not let later entries overtake the
 * ones it took (they sit in the consumer's pending list, unseen).
 */
import test from 'ava';
import { Redis } from 'ioredis';
import { RedisStreamSource } from '../../src/subscriptions/sources/redis-stream.js';
import { startRedis } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';

test('entries of a read whose reply was lost come before the entries added after it', async (t) => {
  const redis = await startRedis();
  const proxy = await startTcpProxy(redis.port);
  const direct = new Redis(redis.url);
  const source = new RedisStreamSource({ url: `redis://127.0.0.1:${proxy.port}`, stream: 'orders', group: 'g', consumer: 'c', startAt: 'earliest' });
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

    // What the consumer does (consumer.ts): a failed read rewinds, a handled batch is acknowledged.
    const handedOut: string[] = [];
    const take = async (batch: Promise<Awaited<ReturnType<typeof source.next>>>) => {
      try {
        const messages = await batch;
        handedOut.push(...messages.map((m) => m.position));
        if (messages.length > 0) await source.ack(messages);
      } catch {
        source.rewind();
      }
    };
    await take(lost);
    const deadline = Date.now() + 5000;
    while (handedOut.length < 2 && Date.now() < deadline) await take(source.next());
    t.deepEqual(handedOut, ['1-1', '2-1']);
  } finally {
    await source.close();
    direct.disconnect();
    await proxy.close();
    await redis.stop();
  }
});
