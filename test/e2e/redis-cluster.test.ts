/**
 * The Redis store on a Redis Cluster (`redis-cluster://`, three masters on loopback, AOF with
 * fsync always): calls, sends, virtual-object adds on 50 keys with exact counts, a workflow
 * waiting on its durable promise, `/query` rows from every partition (so from every master), a
 * SIGKILL of the server under load, a SIGKILL and restart of one master under load (its slots
 * answer 503 meanwhile, then everything recovers), and a Redis Streams subscription whose
 * stream lives on the cluster.
 */
import test from 'ava';
import { Cluster } from 'ioredis';
import path from 'node:path';
import { startService } from '../support/sdk-service.js';
import { sqlRows, startStack, type Stack } from '../support/stack.js';
import { bodyOf, expectEveryMessageOnceInOrder, keyOf, publishAll, subscribe } from '../support/streaming.js';
import { waitFor } from '../support/wait.js';

const KEYS = Array.from({ length: 50 }, (_, i) => `c${i}`);

async function withStack(serviceFile: string, run: (stack: Stack) => Promise<void>): Promise<void> {
  const stack = await startStack('redis-cluster', { serviceFile });
  try {
    await run(stack);
  } finally {
    await stack.stop();
  }
}

/** Keys each master holds: every master must hold some, or the test did not spread. */
async function keysPerMaster(stack: Stack): Promise<number[]> {
  const cluster = new Cluster(stack.redisCluster!.masters.map((m) => ({ host: '127.0.0.1', port: m.port })));
  try {
    await new Promise((r) => cluster.once('ready', r));
    return await Promise.all(cluster.nodes('master').map((n) => n.dbsize()));
  } finally {
    cluster.disconnect();
  }
}

/**
 * Sends `rounds` adds to every key (`delta` 1, a short pause inside the handler), `during`
 * running once a share of them is acknowledged. Returns the acknowledged invocation ids per key
 * and how many sends got no acknowledgement (refused or unknown outcome).
 */
async function addsUnder(
  stack: Stack,
  rounds: number,
  disruptions: Array<{ atRound: number; run: () => Promise<void> }>,
) {
  const acked = new Map<string, string[]>(KEYS.map((k) => [k, []]));
  const unacked = new Map<string, number>(KEYS.map((k) => [k, 0]));
  const statuses = new Map<number, number>();
  const send = async (key: string) => {
    const res = await stack.ingress
      .post(`restate/send/Counter/${key}/add`, { json: { delta: 1, pauseMs: 10 } })
      .catch(() => undefined);
    const status = res?.statusCode ?? 0;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (status === 202) acked.get(key)!.push((JSON.parse(res!.body) as { invocationId: string }).invocationId);
    else unacked.set(key, unacked.get(key)! + 1);
  };
  let sent = 0;
  const load = (async () => {
    for (let i = 0; i < rounds; i++) {
      await Promise.all(KEYS.map(send));
      sent++;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  for (const d of disruptions) {
    await waitFor(async () => sent >= d.atRound, 120_000);
    await d.run();
  }
  await load;
  return { acked, unacked, statuses };
}

/** Every acknowledged add completes, the count is within [acked, acked + unacked], no key stays locked, no overlap. */
async function expectAddsLanded(
  t: import('ava').ExecutionContext,
  stack: Stack,
  acked: Map<string, string[]>,
  unacked: Map<string, number>,
): Promise<void> {
  for (const key of KEYS) {
    const ids = acked.get(key)!;
    const done = await Promise.all(
      ids.map((id) => stack.ingress.get(`restate/attach/${id}`, { timeout: { request: 90_000 } })),
    );
    t.deepEqual(
      done.map((r) => r.statusCode),
      ids.map(() => 200),
      `${key}: ${stack.server.output().slice(-3000)}`,
    );
    const after = await stack.ingress.post(`restate/call/Counter/${key}/add`, { json: { delta: 0 } });
    t.is(after.statusCode, 200, `${key} stays locked`);
    const count = Number(after.body);
    t.true(
      count >= ids.length && count <= ids.length + unacked.get(key)!,
      `${key}: count ${count}, acknowledged ${ids.length}, unacknowledged ${unacked.get(key)}`,
    );
  }
  const c = await stack.counts();
  for (const key of KEYS) t.is(c[`overlaps:${key}`], undefined, `two exclusive handlers of ${key} ran at once`);
}

test.serial('calls, sends, adds on 50 keys, a workflow promise and /query over every master', async (t) => {
  await withStack('objects.mjs', async (stack) => {
    const workflows = await startService(path.resolve('test/support/services/workflows.mjs'));
    try {
      t.is((await stack.admin.post('deployments', { json: { uri: workflows.url } })).statusCode, 201);
      const { ingress } = stack;

      const calls = await Promise.all(
        Array.from({ length: 20 }, (_, i) => ingress.post('restate/call/Once/run', { json: { tag: `call${i}` } })),
      );
      t.deepEqual(
        calls.map((r) => r.body),
        calls.map((_, i) => `"call${i}:1"`),
      );
      const sends = await Promise.all(
        Array.from({ length: 20 }, (_, i) => ingress.post('restate/send/Once/run', { json: { tag: `send${i}` } })),
      );
      t.deepEqual(
        sends.map((r) => r.statusCode),
        sends.map(() => 202),
      );
      for (const r of sends) {
        const { invocationId } = JSON.parse(r.body) as { invocationId: string };
        t.is((await ingress.get(`restate/attach/${invocationId}`)).statusCode, 200);
      }

      const ADDS = 4;
      const adds = await Promise.all(
        KEYS.flatMap((key) =>
          Array.from({ length: ADDS }, () => ingress.post(`restate/call/Counter/${key}/add`, { json: { delta: 1 } })),
        ),
      );
      t.deepEqual(
        adds.map((r) => r.statusCode),
        adds.map(() => 200),
      );
      for (const key of KEYS) t.is((await ingress.post(`restate/call/Counter/${key}/get`)).body, String(ADDS), key);

      const run = ingress.post('restate/call/Signup/cluster-wf/run', { json: 'a@b.c' });
      await waitFor(
        async () => (await ingress.post('restate/call/Signup/cluster-wf/status')).body === '"waiting"',
        10_000,
      );
      t.is((await ingress.post('restate/call/Signup/cluster-wf/verify', { json: 'V' })).body, '"resolved"');
      t.is((await run).body, '"ok a@b.c V"');

      const invocations = await sqlRows(
        stack.admin,
        "SELECT COUNT(*) AS n FROM sys_invocation WHERE target_handler_name = 'add' AND status = 'completed'",
      );
      t.is(Number(invocations[0]!['n']), KEYS.length * ADDS);
      const state = await sqlRows(
        stack.admin,
        "SELECT service_key, value_utf8 FROM state WHERE service_name = 'Counter' AND key = 'count'",
      );
      t.deepEqual(state.map((r) => r['service_key']).sort(), [...KEYS].sort());
      t.true(state.every((r) => r['value_utf8'] === String(ADDS)));
      const perMaster = await keysPerMaster(stack);
      t.is(perMaster.length, 3);
      t.true(
        perMaster.every((n) => n > 0),
        `keys per master: ${perMaster.join(', ')}`,
      );
    } finally {
      await workflows.stop();
    }
  });
});

test.serial('a SIGKILL of the server under load loses no acknowledged add and locks nothing', async (t) => {
  await withStack('objects.mjs', async (stack) => {
    const { acked, unacked } = await addsUnder(stack, 12, [
      {
        atRound: 4,
        run: async () => {
          await stack.server.kill();
          await stack.server.restart();
        },
      },
    ]);
    await expectAddsLanded(t, stack, acked, unacked);
  });
});

test.serial(
  'a SIGKILL and restart of one master under load: 503s meanwhile, then every acknowledged add lands once',
  async (t) => {
    await withStack('objects.mjs', async (stack) => {
      const master = stack.redisCluster!.masters[1]!;
      let healthWhileAway = 0;
      const { acked, unacked, statuses } = await addsUnder(stack, 16, [
        {
          atRound: 4,
          run: async () => {
            await master.halt({ kill: true });
            // Longer than the cluster node timeout (2 s): the other masters declare it failed
            // and refuse every command with CLUSTERDOWN until it is back.
            await new Promise((r) => setTimeout(r, 3000));
            healthWhileAway = (await stack.admin.get('health')).statusCode;
            await master.resume();
            await stack.redisCluster!.waitOk();
          },
        },
      ]);
      t.true((statuses.get(503) ?? 0) > 0, `statuses: ${JSON.stringify([...statuses])}`);
      await expectAddsLanded(t, stack, acked, unacked);
      t.is(healthWhileAway, 503);
      t.is((await stack.admin.get('health')).statusCode, 200);
      t.regex(stack.server.output(), /store unavailable: Redis at redis-cluster:\/\/.*store available again/s);
    });
  },
);

test.serial('a Redis Streams subscription on the cluster: every message once, in key order', async (t) => {
  await withStack('subscriptions.mjs', async (stack) => {
    await subscribe(stack.admin, 'redis-stream://orders');
    const producer = new Cluster(stack.redisCluster!.masters.map((m) => ({ host: '127.0.0.1', port: m.port })));
    const base = Date.now();
    try {
      await publishAll(
        (i) => producer.xadd('orders', `${base}-${i + 1}`, 'key', keyOf(i), 'value', bodyOf(i)).then(() => undefined),
        3000,
      );
      await expectEveryMessageOnceInOrder(t, stack, 60_000);
    } finally {
      producer.disconnect();
    }
  });
});
