/**
 * The subscription engine's own logic, without a broker: source URIs, message → invocation
 * request, back-pressure, and a consumer over an in-memory source (acknowledge only what is
 * stored, per-key order under concurrent creations, a rewind after a failed ack creating
 * nothing twice). The sources themselves are tested end to end (test/e2e/subscriptions-*).
 */
import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { createSubscription, emptyExtras, parseSource, type Subscription } from '../../src/registry/extras.js';
import type { EffectiveHandler } from '../../src/registry/types.js';
import { derivedId } from '../../src/runtime/services/admission.js';
import type { InvokeRequest } from '../../src/runtime/types.js';
import { SubscriptionConsumer, type SinkRuntime } from '../../src/subscriptions/consumer.js';
import { InFlight } from '../../src/subscriptions/in-flight.js';
import { invocationRequestOf } from '../../src/subscriptions/invocation-request.js';
import { Progress } from '../../src/subscriptions/progress.js';
import type { MessageSource, SourceMessage } from '../../src/subscriptions/source.js';

const handlerOf = (ty: 'Service' | 'VirtualObject'): EffectiveHandler =>
  ({
    service: { name: 'Log', ty },
    handler: { name: 'append', ...(ty === 'VirtualObject' ? { ty: 'Exclusive' } : {}) },
    retryPolicy: {
      initialInterval: 50,
      exponentiationFactor: 2,
      maxAttempts: null,
      maxInterval: 1000,
      onMaxAttempts: 'Pause',
    },
  }) as unknown as EffectiveHandler;

const message = (position: number, key?: string): SourceMessage => ({
  topic: 'orders',
  stream: '0',
  position: String(position),
  key,
  value: new TextEncoder().encode(`"m${position}"`),
  timestamp: 1_700_000_000_000 + position,
  headers: [{ key: 'source', value: 'test' }],
});

test('source URIs: every scheme, and a Redis stream of the store without a cluster', (t) => {
  t.deepEqual(parseSource('kafka://c/orders'), { scheme: 'kafka', cluster: 'c', topic: 'orders' });
  t.deepEqual(parseSource('nats://c/orders.>'), { scheme: 'nats', cluster: 'c', topic: 'orders.>' });
  t.deepEqual(parseSource('redis-stream://orders'), { scheme: 'redis-stream', cluster: '', topic: 'orders' });
  t.deepEqual(parseSource('redis-stream://c/orders'), { scheme: 'redis-stream', cluster: 'c', topic: 'orders' });
  t.is(parseSource('amqp://c/orders'), undefined);

  const x = emptyExtras();
  const exists = () => true;
  const created = createSubscription(x, { source: 'redis-stream://orders', sink: 'service://Log/append' }, exists);
  t.deepEqual(created.options, { 'group.id': created.id, 'client.id': 'restate' });
  t.throws(() => createSubscription(x, { source: 'nats://c/orders', sink: 'service://Log/append' }, exists), {
    message: "Kafka cluster 'c' not found. Available clusters: []",
  });
  t.throws(() => createSubscription(x, { source: 'redis-stream://', sink: 'service://Log/append' }, exists), {
    message:
      "[META0009] invalid source URI 'redis-stream://': the source URI must have the form redis-stream://<stream_name> or redis-stream://<cluster_name>/<stream_name>.",
  });
});

test("a message becomes a request with its key, Restate's Kafka headers and an id fixed by (subscription, stream, position)", (t) => {
  const vo = handlerOf('VirtualObject');
  const req = invocationRequestOf('sub_1', vo, message(7, 'k1?>'));
  t.deepEqual(req.target, { service: 'Log', handler: 'append', serviceTy: 'VirtualObject', key: 'k1?>' });
  t.deepEqual(req.headers, [
    { key: 'kafka.offset', value: '7' },
    { key: 'kafka.topic', value: 'orders' },
    { key: 'kafka.partition', value: '0' },
    { key: 'kafka.timestamp', value: '1700000000007' },
    { key: 'restate.subscription.id', value: 'sub_1' },
    // URL-safe base64 with padding: 'k1?>' is 6b 31 3f 3e.
    { key: 'kafka.key', value: 'azE_Pg==' },
    { key: 'source', value: 'test' },
  ]);
  t.is(req.invokedBy, 'subscription');
  const id = derivedId(req, vo);
  t.truthy(id);
  t.is(derivedId(invocationRequestOf('sub_1', vo, message(7, 'k1?>')), vo), id, 'the same message, the same id');
  t.not(derivedId(invocationRequestOf('sub_1', vo, message(8, 'k1?>')), vo), id);
  t.not(derivedId(invocationRequestOf('sub_2', vo, message(7, 'k1?>')), vo), id);
  t.is(invocationRequestOf('sub_1', vo, message(9)).target.key, '', 'no key: the empty key');
  t.false('key' in invocationRequestOf('sub_1', handlerOf('Service'), message(9, 'k1')).target, 'a service has no key');
});

test('in-flight slots: at most the limit, handed out in order, and an aborted wait gives its place up', async (t) => {
  const slots = new InFlight(2);
  const never = new AbortController().signal;
  await slots.acquire(never);
  await slots.acquire(never);
  const order: string[] = [];
  const aborted = new AbortController();
  const a = slots.acquire(never).then(() => order.push('a'));
  const gone = slots.acquire(aborted.signal).catch(() => order.push('gone'));
  const b = slots.acquire(never).then(() => order.push('b'));
  aborted.abort(new Error('stop'));
  await gone;
  slots.release();
  await a;
  slots.release();
  await b;
  t.deepEqual(order, ['gone', 'a', 'b']);
  t.is(slots.count, 2);
});

test('the rate counts the last 10 seconds only', (t) => {
  const p = new Progress();
  p.acknowledged([message(1), message(2)], 1_000);
  p.acknowledged([message(3)], 5_000);
  t.is(p.rate(5_000), 0.3);
  t.is(p.rate(12_500), 0.1);
  t.is(p.rate(30_000), 0);
  t.is(p.delivered, 3);
  t.is(p.lastPosition, '3');
});

/** An in-memory broker: hands out batches, remembers what was acknowledged, fails the first ack if told to. */
class MemorySource implements MessageSource {
  acked = new Set<string>();
  private cursor = 0;
  constructor(
    private readonly messages: SourceMessage[],
    private failAcks = 0,
  ) {}
  async next(): Promise<SourceMessage[]> {
    await sleep(1);
    const batch = this.messages.slice(this.cursor, this.cursor + 25);
    this.cursor += batch.length;
    return batch;
  }
  async ack(batch: SourceMessage[]): Promise<void> {
    if (this.failAcks-- > 0) throw new Error('broker away');
    for (const m of batch) this.acked.add(m.position);
  }
  rewind(): void {
    this.cursor = this.messages.findIndex((m) => !this.acked.has(m.position));
    if (this.cursor < 0) this.cursor = this.messages.length;
  }
  lag = async () => this.messages.length - this.acked.size;
  close = async () => undefined;
}

/** Creations take a random while; ids already stored answer `previous`, as the runtime does. */
function memoryRuntime(stored: Set<string>, log: InvokeRequest[], handler: EffectiveHandler): SinkRuntime {
  return {
    async invoke(req) {
      await sleep(Math.random() * 5);
      const id = derivedId(req, handler)!;
      if (stored.has(id)) return { invocationId: id, previous: true };
      stored.add(id);
      log.push(req);
      return { invocationId: id, previous: false };
    },
    attach: async () => undefined,
  };
}

test('a consumer creates every message once, in key order, and acknowledges only what it stored, across a failed ack', async (t) => {
  const handler = handlerOf('VirtualObject');
  const messages = Array.from({ length: 200 }, (_, i) => message(i + 1, `k${i % 7}`));
  const source = new MemorySource(messages, 1);
  const stored = new Set<string>();
  const created: InvokeRequest[] = [];
  const subscription: Subscription = {
    id: 'sub_1',
    source: 'redis-stream://orders',
    sink: 'service://Log/append',
    options: {},
  };
  const consumer = new SubscriptionConsumer(subscription, source, {
    registry: { resolveHandler: () => handler },
    runtime: memoryRuntime(stored, created, handler),
    log: pino({ level: 'silent' }),
    maxInFlight: 10,
  });
  consumer.start();
  const deadline = Date.now() + 10_000;
  while (source.acked.size < messages.length && Date.now() < deadline) await sleep(10);
  await consumer.stop();
  t.is(source.acked.size, messages.length);
  t.is(created.length, messages.length, 'the batch delivered again after the failed ack created nothing');
  for (let k = 0; k < 7; k++) {
    const offsets = created
      .filter((r) => r.target.key === `k${k}`)
      .map((r) => Number(r.headers.find((h) => h.key === 'kafka.offset')!.value));
    t.deepEqual(
      offsets,
      [...offsets].sort((a, b) => a - b),
      `k${k} in order`,
    );
  }
  t.is(consumer.progress.delivered, messages.length);
  t.is(await consumer.lag(), 0);
});
