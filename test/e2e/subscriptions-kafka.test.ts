/**
 * Subscriptions from Kafka (`kafka://{cluster}/{topic}`), end to end against a real broker:
 * the same scenario as the Redis Streams and NATS tests (1000 messages over 10 keys, once
 * each and in key order, also across two SIGKILLs of the server). No Kafka broker can run on
 * the project's machines (none is packaged for Debian or npm, and there is no container
 * engine), so this runs only when REDSTATE_TEST_KAFKA_BROKERS names one (host:port,...), and
 * is reported as skipped otherwise. Everything above the client is shared with the sources
 * tested for real.
 */
import { Admin, Producer } from '@platformatic/kafka';
import test from 'ava';
import { freePort } from '../support/ports.js';
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

const brokers = process.env['REDSTATE_TEST_KAFKA_BROKERS'];
const SKIPPED = 'skipped: REDSTATE_TEST_KAFKA_BROKERS is not set, and no Kafka broker can run on this machine';

async function withTopic(
  run: (stack: Stack, publish: (i: number) => Promise<void>, topic: string) => Promise<void>,
): Promise<void> {
  const bootstrapBrokers = brokers!.split(',');
  const topic = `redstate-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const admin = new Admin({ clientId: 'redstate-test', bootstrapBrokers });
  await admin.createTopics({ topics: [topic], partitions: 3 });
  await admin.close();
  const producer = new Producer({ clientId: 'redstate-test', bootstrapBrokers });
  const stack = await startStack('embedded', { serviceFile: 'subscriptions.mjs' });
  try {
    const cluster = await stack.admin.post('kafka-clusters', {
      json: { name: 'test', properties: { 'bootstrap.servers': brokers } },
    });
    if (cluster.statusCode !== 201) throw new Error(`cluster: ${cluster.statusCode} ${cluster.body}`);
    const publish = async (i: number) => {
      await producer.send({
        messages: [
          {
            topic,
            key: Buffer.from(keyOf(i)),
            value: Buffer.from(bodyOf(i)),
            headers: new Map([[Buffer.from('source'), Buffer.from('test')]]),
          },
        ],
      });
    };
    await run(stack, publish, topic);
  } finally {
    await producer.close();
    await stack.stop();
  }
}

test('subscriptions that cannot be read show why in sys_subscription_progress, and the server carries on', async (t) => {
  const stack = await startStack('embedded', { serviceFile: 'subscriptions.mjs' });
  try {
    const nobody = `127.0.0.1:${await freePort()}`;
    await stack.admin.post('kafka-clusters', { json: { name: 'absent', properties: { 'bootstrap.servers': nobody } } });
    const id = await subscribe(stack.admin, 'kafka://absent/orders');
    let row: Record<string, unknown> | undefined;
    const deadline = Date.now() + 30_000;
    while (!row?.['last_error'] && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      [row] = await sqlRows(
        stack.admin,
        `SELECT status, delivered, last_error FROM sys_subscription_progress WHERE id = '${id}'`,
      );
    }
    t.like(row, { status: 'running', delivered: 0 });
    t.truthy(row?.['last_error'], 'the connection failure is shown');
    // redis-stream://{stream} reads the store's Redis, and this server runs on the embedded store.
    const own = await subscribe(stack.admin, 'redis-stream://orders');
    await new Promise((r) => setTimeout(r, 1500));
    t.deepEqual(
      await sqlRows(stack.admin, `SELECT status, last_error FROM sys_subscription_progress WHERE id = '${own}'`),
      [
        {
          status: 'failed',
          last_error:
            "Error: redis-stream://orders reads the store's Redis, but this server runs on the embedded store",
        },
      ],
    );
    t.is((await stack.ingress.post('Log/k0/get')).statusCode, 200);
  } finally {
    await stack.stop();
  }
});

if (!brokers) {
  // ava lists a skipped test with its title: the reason shows in every run's report.
  test.skip(`Kafka: every message once, in key order, across SIGKILLs (${SKIPPED})`, () => undefined);
} else {
  test.serial(
    'every message of a Kafka topic invokes the handler once, in key order, with the record headers',
    async (t) => {
      await withTopic(async (stack, publish, topic) => {
        const id = await subscribe(stack.admin, `kafka://test/${topic}`);
        await publishAll(publish, 2000);
        const logs = await expectEveryMessageOnceInOrder(t, stack, 90_000);
        const headers = logs.get('k9')!.headers;
        t.is(headers['kafka.key'], Buffer.from('k9').toString('base64'));
        t.is(headers['kafka.topic'], topic);
        t.regex(headers['kafka.partition'] ?? '', /^[0-2]$/);
        t.is(headers['restate.subscription.id'], id);
        t.regex(headers['kafka.offset'] ?? '', /^\d+$/);
        t.is(headers['source'], 'test');
        const [progress] = await sqlRows(stack.admin, `SELECT * FROM sys_subscription_progress WHERE id = '${id}'`);
        t.like(progress, { status: 'running', delivered: MESSAGES });
      });
    },
  );

  test.serial('SIGKILLs of the server lose no Kafka record and run none twice', async (t) => {
    await withTopic(async (stack, publish, topic) => {
      await subscribe(stack.admin, `kafka://test/${topic}`);
      await publishAll(publish, 6000, [killServer(stack, 1500), killServer(stack, 4500)]);
      await expectEveryMessageOnceInOrder(t, stack, 120_000);
    });
  });
}
