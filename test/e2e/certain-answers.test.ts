/**
 * No ambiguous answers (issue 31): a write whose commit's outcome the server cannot know (its
 * Redis connection broke after the command was sent) is settled before the client is answered.
 * A TCP relay between redstate and a real redis-server loses the replies (the commands ran) or
 * the requests (they never reached Redis), then breaks the connections; ioredis reconnects,
 * and every call, send (delayed, idempotent), object add, state write, cancel, kill,
 * restart-as-new and purge of a journal answers as if nothing had happened: each took effect
 * exactly once. Past the bound
 * (REDSTATE_STORE_OUTAGE_WAIT) the 503 says whether a retry is safe.
 */
import test from 'ava';
import got, { type Got } from 'got';
import { setTimeout as delay } from 'node:timers/promises';
import { startRedis, type RunningRedis } from '../support/redis.js';
import { startService, type StartedService } from '../support/sdk-service.js';
import { startRedstate, type RedstateProcess } from '../support/server.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';

const client = (prefixUrl: string) =>
  got.extend({ prefixUrl, throwHttpErrors: false, retry: { limit: 0 }, timeout: { request: 40_000 } });

interface World {
  redis: RunningRedis;
  proxy: TcpProxy;
  service: StartedService;
  server: RedstateProcess;
  ingress: Got;
  admin: Got;
}

async function world(env: Record<string, string> = {}): Promise<World> {
  const redis = await startRedis();
  const proxy = await startTcpProxy(redis.port);
  const service = await startService('basic.mjs');
  const server = await startRedstate({ redisUrl: `redis://127.0.0.1:${proxy.port}`, env });
  const w = { redis, proxy, service, server, ingress: client(server.ingress), admin: client(server.admin) };
  const registered = await w.admin.post('deployments', { json: { uri: service.url } });
  if (registered.statusCode !== 201) throw new Error(registered.body);
  return w;
}

async function stop(w: World): Promise<void> {
  await w.server.stop();
  await w.service.stop();
  await w.proxy.close();
  await w.redis.stop();
}

/** A workflow run that waits for its promise: something to cancel or kill. */
async function waitingRun(w: World, id: string): Promise<string> {
  const res = await w.ingress.post(`restate/send/Signup/${id}/run`, { json: `${id}@x` });
  return (JSON.parse(res.body) as { invocationId: string }).invocationId;
}

for (const lost of ['replies', 'requests'] as const) {
  test.serial(
    `the ${lost} of Redis commands lost: every write still answers as if nothing happened, and took effect once`,
    async (t) => {
      const w = await world();
      try {
        const toKill = await waitingRun(w, `kill-${lost}`);
        const toCancel = await waitingRun(w, `cancel-${lost}`);
        await waitFor(async () => (await w.ingress.get(`restate/output/${toCancel}`)).statusCode === 470, 10_000);
        const [toRestart, toPurge] = await Promise.all(
          ['Ed', 'Fa'].map(async (name) => {
            const done = await w.ingress.post('restate/call/Greeter/greet', { json: name });
            return String(done.headers['x-restate-id']);
          }),
        );

        if (lost === 'replies') w.proxy.holdReplies();
        else w.proxy.holdRequests();
        const answers = Promise.all([
          w.ingress.post('restate/call/Greeter/greet', { json: 'Ada' }),
          w.ingress.post('restate/send/Greeter/greet', { json: 'Bo' }),
          w.ingress.post('restate/send/Greeter/greet?delay=1s', { json: 'Cy' }),
          w.ingress.post('restate/send/Greeter/greet', { json: 'Di', headers: { 'idempotency-key': `idem-${lost}` } }),
          w.ingress.post('restate/call/Counter/adds/add', { json: 1 }),
          w.ingress.post('restate/call/Counter/adds/add', { json: 2 }),
          w.admin.post('services/Counter/state', {
            json: { object_key: `written-${lost}`, new_state: { count: [0x34, 0x32] } },
          }),
          w.admin.patch(`invocations/${toKill}/kill`),
          w.admin.patch(`invocations/${toCancel}/cancel`),
          w.admin.patch(`invocations/${toRestart}/restart-as-new`),
          w.admin.patch(`invocations/${toPurge}/purge-journal`),
        ]);
        // The commands are on their way (and, replies lost, have run); then the connections break.
        await delay(500);
        w.proxy.cut();
        const [call, send, delayed, idempotent, add1, add2, state, kill, cancel, restarted, purged] = await answers;

        t.is(call.statusCode, 200, call.body);
        t.is(call.body, '"hi Ada"');
        for (const [name, res] of Object.entries({ send, delayed, idempotent })) {
          t.is(res.statusCode, 202, `${name}: ${res.body}`);
          t.like(JSON.parse(res.body), { status: 'Accepted' }, name);
        }
        t.truthy((JSON.parse(delayed.body) as { executionTime?: string }).executionTime);
        t.deepEqual([add1.statusCode, add2.statusCode], [200, 200], `${add1.body} ${add2.body}`);
        t.deepEqual(new Set([add1.body, add2.body]).size, 2);
        t.is(state.statusCode, 202, state.body);
        t.is(kill.statusCode, 200, kill.body);
        t.true([200, 202].includes(cancel.statusCode), cancel.body);
        t.is(restarted.statusCode, 200, restarted.body);
        t.is(purged.statusCode, 200, purged.body);

        // Each took effect once: one invocation per send, the adds counted once each.
        const ids = [send, delayed, idempotent].map(
          (r) => (JSON.parse(r.body) as { invocationId: string }).invocationId,
        );
        for (const id of ids) {
          const out = await w.ingress.get(`restate/attach/${id}`);
          t.is(out.statusCode, 200, out.body);
        }
        t.is((await w.ingress.post('restate/call/Counter/adds/get')).body, '3');
        await waitFor(
          async () => (await w.ingress.post(`restate/call/Counter/written-${lost}/get`)).body === '42',
          10_000,
        );
        const again = await w.ingress.post('restate/send/Greeter/greet', {
          json: 'Di',
          headers: { 'idempotency-key': `idem-${lost}` },
        });
        t.like(JSON.parse(again.body), { invocationId: ids[2], status: 'PreviouslyAccepted' });
        const greets = JSON.parse(
          (
            await w.admin.post('query', {
              json: { query: "SELECT count(*) AS n FROM sys_invocation WHERE target = 'Greeter/greet'" },
              headers: { accept: 'application/json' },
            })
          ).body,
        ) as { rows: Array<{ n: number }> };
        // Four requests, the two completed before, and one restart of them.
        t.is(greets.rows[0]!.n, 7);
        const { new_invocation_id: restartId } = JSON.parse(restarted.body) as { new_invocation_id: string };
        t.is((await w.ingress.get(`restate/attach/${restartId}`)).body, '"hi Ed"');
        t.is((await w.ingress.get(`restate/output/${toPurge}`)).body, '"hi Fa"');
        t.regex((await w.ingress.get(`restate/output/${toKill}`)).body, /killed/);
        await waitFor(async () => (await w.ingress.get(`restate/output/${toCancel}`)).statusCode !== 470, 10_000);
        // Every answer above was certain; the server's own log may still say that a commit's
        // outcome was unknown, which is what it then settled.
      } finally {
        await stop(w);
      }
    },
  );
}

test.serial('past the bound, the 503 says whether a retry is safe', async (t) => {
  const w = await world({ REDSTATE_STORE_OUTAGE_WAIT: '1500' });
  try {
    // The reply lost and the store gone for good: whether the call was created is not known.
    w.proxy.holdReplies();
    const call = w.ingress.post('restate/call/Greeter/greet', { json: 'Ed' });
    await delay(300);
    await w.redis.halt({ kill: true });
    w.proxy.cut();
    const unknown = await call;
    t.is(unknown.statusCode, 503, unknown.body);
    // It names the invocation, which a client can attach to once the store is back.
    t.regex(
      JSON.parse(unknown.body).message as string,
      /while this invocation was being created and stayed unavailable for 1\.5 s, so whether it was created is not known yet\. Its id is (inv_\w+): attach to it \(\/restate\/attach\/\1\) once the store is back; sending the request again without an idempotency key may run it twice\./,
    );
    // Refused before it was sent: nothing was applied.
    const refused = await w.ingress.post('restate/send/Greeter/greet', { json: 'Flo' });
    t.is(refused.statusCode, 503, refused.body);
    t.regex(
      JSON.parse(refused.body).message as string,
      /stayed unavailable for 1\.5 s and this request was not applied\. It is safe to retry\./,
    );
    const register = await w.admin.post('deployments', { json: { uri: w.service.url, force: true } });
    t.is(register.statusCode, 503, register.body);
    t.regex(register.body, /safe to retry/);
  } finally {
    await w.redis.resume();
    await stop(w);
  }
});
