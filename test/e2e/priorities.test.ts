/**
 * Priorities and bounded queues (issue 26): with vqueues, a scoped request may carry
 * `x-restate-priority` (1 starts first, 9 last, 5 without one), and a limit rule may bound how
 * many wait in its bucket (`"backlog"`): past it, requests are refused with 429 and
 * `Retry-After`, nothing stored. Both stores, real SDK services (services/flow.mjs records the
 * order handlers start in), a SIGKILL of the server (and of redis-server) while they wait.
 */
import anyTest, { type TestFn } from 'ava';
import { sqlRows, stacksPerStore, storeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;
stacksPerStore(test, { serviceFile: 'flow.mjs', env: { REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES: 'true' } });

interface FlowCounts {
  started: Array<{ tag: string; at: number }>;
}

const startOrder = async (stack: Stack, prefix: string) =>
  ((await stack.counts()) as unknown as FlowCounts).started.filter((s) => s.tag.startsWith(prefix)).map((s) => s.tag);

async function setRule(stack: Stack, pattern: string, limits: Record<string, number>): Promise<void> {
  const res = await stack.admin.put('limits/rules', { json: [{ pattern, limits }] });
  if (res.statusCode !== 200) throw new Error(`rule ${pattern}: ${res.statusCode} ${res.body}`);
}

async function send(stack: Stack, scope: string, tag: string, ms: number, priority?: number) {
  return stack.ingress.post(`restate/scope/${scope}/send/Flow/work`, {
    json: { tag, ms },
    headers: priority !== undefined ? { 'x-restate-priority': String(priority) } : {},
  });
}

async function sent(stack: Stack, scope: string, tag: string, ms: number, priority?: number): Promise<string> {
  const res = await send(stack, scope, tag, ms, priority);
  if (res.statusCode !== 202) throw new Error(`send ${tag}: ${res.statusCode} ${res.body}`);
  return (JSON.parse(res.body) as { invocationId: string }).invocationId;
}

async function allDone(stack: Stack, ids: string[]): Promise<void> {
  for (const id of ids) {
    const res = await stack.ingress.get(`restate/attach/${id}`);
    if (res.statusCode !== 200) throw new Error(`${id}: ${res.statusCode} ${res.body}`);
  }
}

/** Waits until `n` invocations of the scope wait for a slot. */
async function waiting(stack: Stack, scope: string, n: number): Promise<void> {
  await waitFor(
    async () =>
      Number(
        (
          await sqlRows(
            stack.admin,
            `select count(*) as n from sys_invocation where scope = '${scope}' and status = 'pending'`,
          )
        )[0]!['n'],
      ) === n,
    10_000,
  );
}

for (const store of storeKinds) {
  test.serial(
    `${store}: with concurrency 1, a high-priority request queued last starts first; then by priority and arrival; sys_scheduler shows it`,
    async (t) => {
      const stack = t.context[store]!;
      const scope = `${store}-prio`;
      await setRule(stack, scope, { concurrency: 1 });
      const ids = [await sent(stack, scope, `${scope}-holder`, 1500)];
      await waitFor(async () => (await startOrder(stack, `${scope}-holder`)).length === 1, 10_000);
      ids.push(await sent(stack, scope, `${scope}-low`, 0, 9));
      ids.push(await sent(stack, scope, `${scope}-plain1`, 0));
      ids.push(await sent(stack, scope, `${scope}-plain2`, 0, 5));
      ids.push(await sent(stack, scope, `${scope}-high`, 0, 1));
      await waiting(stack, scope, 4);
      const [row] = await sqlRows(
        stack.admin,
        `select head_entry_id, head_priority, num_inbox, num_inbox_by_priority, blocked_on from sys_scheduler where id = (select vqueue_id from sys_invocation where id = '${ids[1]}')`,
      );
      t.deepEqual(row, {
        head_entry_id: ids[4],
        head_priority: 1,
        num_inbox: 4,
        num_inbox_by_priority: '{"1":1,"5":2,"9":1}',
        blocked_on: 'limit-key-concurrency',
      });
      await allDone(stack, ids);
      t.deepEqual(await startOrder(stack, scope), [
        `${scope}-holder`,
        `${scope}-high`,
        `${scope}-plain1`,
        `${scope}-plain2`,
        `${scope}-low`,
      ]);
    },
  );

  test.serial(
    `${store}: a backlog bound refuses the request past it with 429 and Retry-After, storing nothing; room again once one starts`,
    async (t) => {
      const stack = t.context[store]!;
      const scope = `${store}-bound`;
      await setRule(stack, scope, { concurrency: 1, backlog: 2 });
      const ids = [await sent(stack, scope, `${scope}-0`, 1500)];
      ids.push(await sent(stack, scope, `${scope}-1`, 0), await sent(stack, scope, `${scope}-2`, 0));
      const refused = await send(stack, scope, `${scope}-3`, 0, 1);
      t.is(refused.statusCode, 429);
      t.is(refused.headers['retry-after'], '1');
      t.is(
        refused.body,
        JSON.stringify({
          code: 429,
          message: `the backlog of the limit rule '${scope}' is full (2 waiting): try again later`,
          source: 'ingress',
        }),
      );
      const call = await stack.ingress.post(`restate/scope/${scope}/call/Flow/work`, {
        json: { tag: `${scope}-call`, ms: 0 },
      });
      t.is(call.statusCode, 429, 'a call too');
      t.deepEqual(
        await sqlRows(stack.admin, `select count(*) as n from sys_invocation where scope = '${scope}'`),
        [{ n: 3 }],
        'nothing stored',
      );
      const [sched] = await sqlRows(
        stack.admin,
        `select backlog_limit, backlog_used from sys_scheduler where head_entry_id = '${ids[1]}'`,
      );
      t.deepEqual(sched, { backlog_limit: 2, backlog_used: 2 });
      t.deepEqual(
        await sqlRows(
          stack.admin,
          `select usage, num_waiters, concurrency_limit, backlog_limit from sys_user_limits where scope = '${scope}'`,
        ),
        [{ usage: 1, num_waiters: 2, concurrency_limit: 1, backlog_limit: 2 }],
      );
      await waitFor(async () => (await startOrder(stack, `${scope}-1`)).length === 1, 10_000);
      ids.push(await sent(stack, scope, `${scope}-4`, 0));
      await allDone(stack, ids);
      t.false((await startOrder(stack, scope)).includes(`${scope}-3`));
    },
  );

  test.serial(
    `${store}: requests arriving together cannot slip past the bound: exactly concurrency + backlog accepted`,
    async (t) => {
      const stack = t.context[store]!;
      const scope = `${store}-burst`;
      await setRule(stack, scope, { concurrency: 2, backlog: 5 });
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => send(stack, scope, `${scope}-${i}`, 1000)),
      );
      const accepted = answers.filter((r) => r.statusCode === 202);
      t.is(accepted.length, 7, answers.map((r) => r.statusCode).join(' '));
      t.true(answers.every((r) => r.statusCode === 202 || r.statusCode === 429));
      t.deepEqual(await sqlRows(stack.admin, `select count(*) as n from sys_invocation where scope = '${scope}'`), [
        { n: 7 },
      ]);
      await allDone(
        stack,
        accepted.map((r) => (JSON.parse(r.body) as { invocationId: string }).invocationId),
      );
    },
  );

  test.serial(
    `${store}: priorities hold across a SIGKILL of the server${store === 'redis' ? ' and of redis-server' : ''} while they wait`,
    async (t) => {
      const stack = t.context[store]!;
      const scope = `${store}-prio-kill`;
      await setRule(stack, scope, { concurrency: 1 });
      const ids = [await sent(stack, scope, `${scope}-holder`, 2500)];
      await waitFor(async () => (await startOrder(stack, `${scope}-holder`)).length === 1, 10_000);
      for (const [tag, priority] of [
        ['late', 8],
        ['mid', undefined],
        ['soon', 2],
      ] as const)
        ids.push(await sent(stack, scope, `${scope}-${tag}`, 0, priority));
      await waiting(stack, scope, 3);
      await stack.redis?.halt({ kill: true });
      await stack.server.kill();
      await stack.redis?.resume();
      await stack.server.restart();
      await allDone(stack, ids);
      const order = await startOrder(stack, scope);
      // The holder's first step may run again after the kill; the others start once each, by priority.
      t.deepEqual(
        order.filter((tag) => !tag.endsWith('-holder')),
        [`${scope}-soon`, `${scope}-mid`, `${scope}-late`],
      );
    },
  );

  test(`${store}: bad priorities and backlogs are refused with the reason`, async (t) => {
    const stack = t.context[store]!;
    for (const bad of ['0', '10', 'high', '1.5', '-1']) {
      const res = await send(stack, `${store}-bad`, 'never', 0, bad as unknown as number);
      t.is(res.statusCode, 400, bad);
      t.is(
        res.body,
        JSON.stringify({
          code: 400,
          message: `bad x-restate-priority header, must be a whole number from 1 (starts first) to 9 (starts last), default 5: '${bad}'`,
          source: 'ingress',
        }),
      );
    }
    const unscoped = await stack.ingress.post('restate/send/Flow/work', {
      json: { tag: 'never', ms: 0 },
      headers: { 'x-restate-priority': '1' },
    });
    t.is(unscoped.statusCode, 400);
    t.is(unscoped.body, '{"code":400,"message":"x-restate-priority requires a scope to be set","source":"ingress"}');
    const rule = await stack.admin.put('limits/rules', { json: [{ pattern: 'x', limits: { backlog: -1 } }] });
    // serde's answer to a bad field, as for `concurrency`.
    t.is(rule.statusCode, 422);
    t.regex(rule.body, /limits\.backlog/);
    const listed = await stack.admin.put('limits/rules', {
      json: [{ pattern: `${store}-listed`, limits: { concurrency: 2, backlog: 0 } }],
    });
    t.is(listed.statusCode, 200);
    t.like((JSON.parse(listed.body) as Array<{ limits: unknown }>)[0], { limits: { concurrency: 2, backlog: 0 } });
  });
}
