/**
 * Flow control that holds (api-spec §1.9, reference-behavior.md §2.9, §3.8): scoped sends
 * under limit rules and paused virtual queues, on both stores, with real SDK services
 * (services/flow.mjs counts how many handlers hold a slot at once) and server SIGKILLs.
 */
import anyTest, { type TestFn } from 'ava';
import { sqlRows, stacksPerStore, storeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;
stacksPerStore(test, { serviceFile: 'flow.mjs', env: { REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES: 'true' } });

interface FlowCounts {
  maxActive: number;
  started: Array<{ tag: string; at: number }>;
  [key: string]: unknown;
}

const counts = async (stack: Stack) => (await stack.counts()) as unknown as FlowCounts;
const startedTags = async (stack: Stack, prefix: string) =>
  (await counts(stack)).started.filter((s) => s.tag.startsWith(prefix));

async function setRule(stack: Stack, pattern: string, limits: Record<string, number>): Promise<void> {
  const res = await stack.admin.put('limits/rules', { json: [{ pattern, limits }] });
  if (res.statusCode !== 200) throw new Error(`rule ${pattern}: ${res.statusCode} ${res.body}`);
}

/** Sends one at a time, so the arrival order is the order of `tags`. */
async function sendAll(
  stack: Stack,
  scope: string,
  tags: string[],
  ms: number,
  limitKey: (i: number) => string | undefined,
): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, tag] of tags.entries()) {
    const key = limitKey(i);
    const res = await stack.ingress.post(`restate/scope/${scope}/send/Flow/work`, {
      json: { tag, ms },
      headers: key ? { 'x-restate-limit-key': key } : {},
    });
    if (res.statusCode !== 202) throw new Error(`send ${tag}: ${res.statusCode} ${res.body}`);
    ids.push((JSON.parse(res.body) as { invocationId: string }).invocationId);
  }
  return ids;
}

async function allComplete(stack: Stack, ids: string[], tags: string[]): Promise<void> {
  const results = await Promise.all(ids.map((id) => stack.ingress.get(`restate/attach/${id}`)));
  for (const [i, r] of results.entries()) {
    if (r.statusCode !== 200 || r.body !== JSON.stringify(tags[i]))
      throw new Error(`${tags[i]}: ${r.statusCode} ${r.body}\n${stack.server.output().slice(-2000)}`);
  }
}

/**
 * Arrival order per limit key: a later arrival may start before an earlier one of its key only
 * when both were given their slots together (a batch of grants reaches the SDK in any order).
 */
function outOfOrder(
  started: Array<{ tag: string; at: number }>,
  arrival: Map<string, number>,
  keyOf: (tag: string) => string,
): string[] {
  const late: string[] = [];
  const seen = new Map<string, { rank: number; at: number }>();
  for (const s of started) {
    const rank = arrival.get(s.tag)!;
    const key = keyOf(s.tag);
    const last = seen.get(key);
    if (last && rank < last.rank && s.at - last.at > 100) late.push(s.tag);
    if (!last || rank > last.rank) seen.set(key, { rank, at: s.at });
  }
  return late;
}

for (const store of storeKinds) {
  test.serial(
    `${store}: a concurrency rule caps scoped work, in arrival order per limit key; raising it takes effect at once`,
    async (t) => {
      const stack = t.context[store]!;
      const scope = `${store}-cap`;
      await setRule(stack, scope, { concurrency: 3 });
      const tags = Array.from({ length: 200 }, (_, i) => `${scope}-${i}`);
      const keyOf = (tag: string) => `k${Number(tag.slice(tag.lastIndexOf('-') + 1)) % 2}`;
      const ids = await sendAll(stack, scope, tags, 200, (i) => keyOf(tags[i]!));
      await waitFor(async () => (await startedTags(stack, `${scope}-`)).length >= 60, 60_000);
      const before = await counts(stack);
      t.true(before.maxActive <= 3, `at most 3 at once under the rule, saw ${before.maxActive}`);
      await setRule(stack, scope, { concurrency: 10 });
      await allComplete(stack, ids, tags);
      const after = await counts(stack);
      t.true(after.maxActive > 3 && after.maxActive <= 10, `raised cap: saw ${after.maxActive} at once`);
      const started = await startedTags(stack, `${scope}-`);
      t.is(started.length, 200);
      for (const tag of tags) t.is(after[`${tag}:start`], 1, tag);
      const arrival = new Map(tags.map((tag, i) => [tag, i]));
      t.deepEqual(outOfOrder(started, arrival, keyOf), []);
      // The limiter is idle again.
      const limits = await sqlRows(
        stack.admin,
        `select usage, num_waiters from sys_user_limits where scope = '${scope}'`,
      );
      t.deepEqual(limits, []);
    },
  );

  test.serial(
    `${store}: the cap holds across two SIGKILLs (the second of Redis too); nothing is lost or run twice`,
    async (t) => {
      const stack = t.context[store]!;
      const scope = `${store}-kill`;
      await setRule(stack, scope, { concurrency: 3 });
      const tags = Array.from({ length: 100 }, (_, i) => `${scope}-${i}`);
      const ids = await sendAll(stack, scope, tags, 200, () => undefined);
      const maxBefore = (await counts(stack)).maxActive;
      for (const [round, startedAtLeast] of [25, 55].entries()) {
        await waitFor(async () => (await startedTags(stack, `${scope}-`)).length >= startedAtLeast, 60_000);
        const redis = round === 1 ? stack.redis : undefined;
        await redis?.halt({ kill: true });
        await stack.server.kill();
        await redis?.resume();
        await stack.server.restart();
      }
      await allComplete(stack, ids, tags);
      const c = await counts(stack);
      t.true(c.maxActive <= Math.max(3, maxBefore), `at most 3 at once, saw ${c.maxActive}`);
      // A step cut by a kill before its result was stored runs again (the SDK's at-least-once for
      // ctx.run): only the steps of the (at most 3) invocations holding a slot at a kill can.
      const repeated = tags.filter((tag) => c[`${tag}:start`] !== 1 || c[`${tag}:end`] !== 1);
      t.true(repeated.length <= 3 * 2, `steps run more than once: ${repeated.join(', ')}`);
      for (const tag of tags) t.true(Number(c[`${tag}:start`]) <= 3 && Number(c[`${tag}:end`]) <= 3, tag);
      const done = await sqlRows(
        stack.admin,
        `select count(*) as n from sys_invocation where scope = '${scope}' and status = 'completed'`,
      );
      t.is(Number(done[0]!['n']), 100, 'each invocation completed once');
    },
  );

  test.serial(`${store}: a paused virtual queue starts nothing, across a restart, until resumed`, async (t) => {
    const stack = t.context[store]!;
    const scope = `${store}-pause`;
    const [first] = await sendAll(stack, scope, [`${scope}-first`], 0, () => 'p');
    await allComplete(stack, [first!], [`${scope}-first`]);
    const [row] = await sqlRows(stack.admin, `select vqueue_id from sys_invocation where id = '${first}'`);
    const vqueue = String(row!['vqueue_id']);
    t.is((await stack.admin.post(`vqueues/${vqueue}/pause`)).statusCode, 202);
    const tags = Array.from({ length: 50 }, (_, i) => `${scope}-${i}`);
    const ids = await sendAll(stack, scope, tags, 0, () => 'p');
    await new Promise((r) => setTimeout(r, 2000));
    t.is((await startedTags(stack, `${scope}-`)).filter((s) => s.tag !== `${scope}-first`).length, 0);
    t.deepEqual(
      await sqlRows(stack.admin, `select queue_is_paused, num_inbox from sys_vqueue_meta where id = '${vqueue}'`),
      [{ queue_is_paused: true, num_inbox: 50 }],
    );
    t.deepEqual(await sqlRows(stack.admin, `select blocked_on from sys_scheduler where id = '${vqueue}'`), [
      { blocked_on: 'vqueue-paused' },
    ]);
    await stack.server.kill();
    await stack.server.restart();
    await new Promise((r) => setTimeout(r, 1000));
    t.is(
      (await startedTags(stack, `${scope}-`)).filter((s) => s.tag !== `${scope}-first`).length,
      0,
      'still paused after a restart',
    );
    t.is((await stack.admin.post(`vqueues/${vqueue}/resume`)).statusCode, 202);
    await allComplete(stack, ids, tags);
  });

  test.serial(
    `${store}: an invocation killed while it waits, or while it runs, gives nothing away and keeps no slot`,
    async (t) => {
      const stack = t.context[store]!;
      const scope = `${store}-kill-waiting`;
      await setRule(stack, scope, { concurrency: 1 });
      const tags = ['long', 'waiting', 'next'].map((x) => `${scope}-${x}`);
      const [long, waiting, next] = await sendAll(stack, scope, tags, 1500, () => undefined);
      await waitFor(async () => (await startedTags(stack, `${scope}-long`)).length === 1, 10_000);
      t.is((await stack.admin.patch(`invocations/${waiting}/kill`)).statusCode, 200);
      t.is((await stack.admin.patch(`invocations/${long}/kill`)).statusCode, 200);
      const done = await stack.ingress.get(`restate/attach/${next}`);
      t.is(done.body, JSON.stringify(tags[2]));
      t.is((await startedTags(stack, `${scope}-waiting`)).length, 0);
      t.deepEqual(
        await sqlRows(stack.admin, `select usage, num_waiters from sys_user_limits where scope = '${scope}'`),
        [],
      );
    },
  );

  test.serial(`${store}: a rate rule spaces the starts (20 per second, within one token)`, async (t) => {
    const stack = t.context[store]!;
    const scope = `${store}-rate`;
    const rate = 20;
    await setRule(stack, scope, { rate });
    const tags = Array.from({ length: 100 }, (_, i) => `${scope}-${i}`);
    const ids = await sendAll(stack, scope, tags, 0, () => undefined);
    await allComplete(stack, ids, tags);
    const rows = await sqlRows(
      stack.admin,
      `select running_at from sys_invocation where scope = '${scope}' order by running_at`,
    );
    const at = rows.map((r) => Date.parse(String(r['running_at'])));
    t.is(at.length, 100);
    let worst = 0;
    for (let i = 0; i < at.length; i++) {
      for (let j = i + 1; j < at.length; j++) worst = Math.max(worst, j - i + 1 - (rate * (at[j]! - at[i]!)) / 1000);
    }
    // j - i + 1 starts in a window of at[j] - at[i] ms: one token to begin with, then `rate` per second.
    t.true(worst <= 2 + 1e-9, `a window started ${worst.toFixed(2)} more than the rate allows`);
  });
}
