/**
 * The deployment registry through the server process, on both stores: registration answers,
 * listing, and that what was registered survives a SIGKILL of the server.
 */
import test from 'ava';
import { startStack, storeKinds } from '../support/stack.js';
import { jsonLines } from '../support/log-lines.js';

for (const store of storeKinds) {
  test.serial(`${store}: registry answers, and survives SIGKILL`, async (t) => {
    const stack = await startStack(store);
    try {
      const { admin, ingress } = stack;
      const again = await admin.post('deployments', { json: { uri: stack.serviceUrl } });
      t.is(again.statusCode, 200, 're-registering the same URI is a no-op');
      const dep = JSON.parse(again.body) as { id: string; services: Array<{ name: string; revision: number }> };
      t.regex(dep.id, /^dp_1[0-9a-zA-Z]{22}$/);
      t.deepEqual(dep.services.map((s) => [s.name, s.revision]).sort(), [
        ['Durable', 1],
        ['Suspender', 1],
        ['Tally', 1],
      ]);

      const forced = await admin.post('deployments', { json: { uri: stack.serviceUrl, force: true } });
      t.is(forced.statusCode, 200);
      t.deepEqual(
        (JSON.parse(forced.body) as typeof dep).services.map((s) => s.revision),
        [2, 2, 2],
      );

      const list = JSON.parse((await admin.get('deployments')).body) as { deployments: Array<{ id: string }> };
      t.deepEqual(
        list.deployments.map((d) => d.id),
        [dep.id],
      );
      const one = await admin.get(`v4/deployments/${dep.id}`);
      t.is(one.statusCode, 200);
      const svc = JSON.parse((await admin.get('services/Durable')).body) as Record<string, unknown>;
      t.is(svc['ty'], 'Service');
      t.is(svc['revision'], 2);
      t.is((await admin.get('services/Durable/handlers/greet')).statusCode, 200);
      t.is((await admin.get('services/Durable/openapi')).statusCode, 200);
      const missing = await admin.get('services/Nope');
      t.is(missing.statusCode, 404);
      t.is(missing.body, '{"message":"The requested service \'Nope\' does not exist","restate_code":null}');

      await stack.server.kill();
      await stack.server.restart();

      const after = JSON.parse((await admin.get('deployments')).body) as { deployments: Array<{ id: string }> };
      t.deepEqual(
        after.deployments.map((d) => d.id),
        [dep.id],
      );
      t.is((JSON.parse((await admin.get('services/Durable')).body) as { revision: number }).revision, 2);
      const call = await ingress.post('restate/call/Durable/greet', { json: 'again' });
      t.is(call.statusCode, 200);
      t.is(call.body, '"hi again"');
      // The legacy send path, on the restarted server.
      const sent = await ingress.post('Durable/greet/send', { json: 'later' });
      t.is(sent.statusCode, 202);
    } finally {
      await stack.stop();
    }
  });
}

test('the server warns in one line when Redis may lose acknowledged work', async (t) => {
  const { startRedis } = await import('../support/redis.js');
  const { startRedstate } = await import('../support/server.js');
  const redis = await startRedis({ appendonly: 'no' });
  try {
    const server = await startRedstate({ redisUrl: redis.url });
    try {
      const warnings = jsonLines(server.output()).filter((l) => l.level === 'warn' && /appendonly/.test(l.msg));
      t.is(warnings.length, 1, server.output());
    } finally {
      await server.stop();
    }
  } finally {
    await redis.stop();
  }
});
