/**
 * Redis with Sentinel (issue 31): `REDSTATE_REDIS_URL=redis-sentinel://…/mymaster` reaches the
 * primary the Sentinels name, and every commit waits for the replica (`WAIT`) before it is
 * acknowledged. What that wait costs per operation is measured here against the same primary
 * and replica with REDSTATE_REDIS_WAIT_REPLICAS=0 (WAIT_COST_OPS operations each way, default
 * 200). The failover itself is in the fault suite (faults.test.ts, `npm run faults -- --store
 * redis-sentinel --fault redis`).
 */
import test from 'ava';
import got from 'got';
import pLimit from 'p-limit';
import { startSentinelSet } from '../support/redis-sentinel.js';
import { startService } from '../support/sdk-service.js';
import { startRedstate } from '../support/server.js';

const OPS = Number(process.env['WAIT_COST_OPS'] ?? 200);

test('commits wait for the replica; what that costs per operation', async (t) => {
  t.timeout(300_000);
  const set = await startSentinelSet();
  const service = await startService('basic.mjs');
  try {
    const measure = async (env: Record<string, string>) => {
      const server = await startRedstate({ redisUrl: set.url, env });
      try {
        const admin = got.extend({ prefixUrl: server.admin, throwHttpErrors: false });
        const ingress = got.extend({ prefixUrl: server.ingress, throwHttpErrors: false, retry: { limit: 0 } });
        t.true(
          [200, 201].includes(
            (await admin.post('deployments', { json: { uri: service.url, force: true } })).statusCode,
          ),
        );
        const key = `k${Date.now()}`;
        // Warm: the first calls of a process pay for compiling and for new connections.
        for (let i = 0; i < 50; i++) await ingress.post(`restate/call/Counter/warm/add`, { json: 1 });
        // One at a time: the latency a WAIT adds to each of an add's commits.
        const serialStart = performance.now();
        for (let i = 0; i < OPS; i++)
          t.is((await ingress.post(`restate/call/Counter/${key}/add`, { json: 1 })).statusCode, 200);
        const serialMs = (performance.now() - serialStart) / OPS;
        // 32 at once over 32 keys: commits share a WAIT per event-loop turn.
        const limit = pLimit(32);
        const loadStart = performance.now();
        await Promise.all(
          Array.from({ length: OPS }, (_, i) =>
            limit(() => ingress.post(`restate/call/Counter/${key}-${i % 32}/add`, { json: 1 })),
          ),
        );
        const perSecond = OPS / ((performance.now() - loadStart) / 1000);
        return { serialMs, perSecond, log: server.output() };
      } finally {
        await server.stop();
      }
    };
    // Alternated, so that a machine busy with something else weighs on both alike.
    const waiting = await measure({});
    const none = await measure({ REDSTATE_REDIS_WAIT_REPLICAS: '0' });
    t.regex(waiting.log, /every commit waits for 1 replica\(s\) before it is acknowledged/);
    t.regex(none.log, /commits are acknowledged by the primary alone/);
    t.log(
      `${OPS} adds each way, primary + 1 replica on loopback: one at a time ${none.serialMs.toFixed(2)} ms/op without WAIT, ` +
        `${waiting.serialMs.toFixed(2)} ms/op with (+${(waiting.serialMs - none.serialMs).toFixed(2)} ms); ` +
        `32 at once ${none.perSecond.toFixed(0)}/s without, ${waiting.perSecond.toFixed(0)}/s with`,
    );
  } finally {
    await service.stop();
    await set.stop();
  }
});
