/**
 * redis-server killed (SIGKILL, AOF `always`) and restarted under virtual-object load, with no
 * restart of redstate: every acknowledged add lands exactly once, exclusive handlers of a key
 * never overlap, no key stays locked, and the server answers normally again by itself.
 */
import test from 'ava';
import { startStack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const KEYS = Array.from({ length: 12 }, (_, i) => `r${i}`);
const ADDS_PER_KEY = 30;
const KILLS = 3;

test('redis: SIGKILL of redis-server under load loses no acknowledged add, overlaps nothing, locks nothing for good', async (t) => {
  const stack = await startStack('redis', { serviceFile: 'objects.mjs' });
  try {
    const { ingress } = stack;
    const acked = new Map<string, string[]>(KEYS.map((k) => [k, []]));
    const unknown = new Map<string, number>(KEYS.map((k) => [k, 0]));
    const send = async (key: string) => {
      const res = await ingress
        .post(`restate/send/Counter/${key}/add`, { json: { delta: 1, pauseMs: 20 } })
        .catch(() => undefined);
      if (res?.statusCode === 202)
        acked.get(key)!.push((JSON.parse(res.body) as { invocationId: string }).invocationId);
      else unknown.set(key, unknown.get(key)! + 1);
    };
    let sent = 0;
    const load = (async () => {
      for (let i = 0; i < ADDS_PER_KEY; i++) {
        await Promise.all(KEYS.map(send));
        sent++;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    for (let kill = 1; kill <= KILLS; kill++) {
      await waitFor(async () => sent >= (kill * ADDS_PER_KEY) / (KILLS + 1), 60_000);
      await stack.redis!.halt({ kill: true });
      await new Promise((r) => setTimeout(r, 500));
      await stack.redis!.resume();
    }
    await load;

    for (const key of KEYS) {
      const ids = acked.get(key)!;
      const done = await Promise.all(
        ids.map((id) => ingress.get(`restate/attach/${id}`, { timeout: { request: 60_000 } })),
      );
      t.deepEqual(
        done.map((r) => r.statusCode),
        ids.map(() => 200),
        `${key}: ${stack.server.output().slice(-3000)}`,
      );
      // A further exclusive call on the key answers: nothing holds its lock for good.
      const after = await ingress.post(`restate/call/Counter/${key}/add`, { json: { delta: 0 } });
      t.is(after.statusCode, 200, `${key} stays locked`);
      const count = Number(after.body);
      t.true(
        count >= ids.length && count <= ids.length + unknown.get(key)!,
        `${key}: count ${count}, acknowledged ${ids.length}, unknown ${unknown.get(key)}`,
      );
    }
    const c = await stack.counts();
    for (const key of KEYS) t.is(c[`overlaps:${key}`], undefined, `two exclusive handlers of ${key} ran at once`);
  } finally {
    await stack.stop();
  }
});
