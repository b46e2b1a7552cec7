/**
 * Store commits per invocation, counted from the server's own metric: a regression in the
 * number of store round trips shows here, not only in the benchmark. A no-op call is one commit
 * to create it and one to complete it. A call with three `ctx.run` steps and a zero sleep adds
 * one commit per step (its Run command with the result the SDK proposes a moment later: the
 * attempt lingers for it, runtime/invoker/attempt.ts), and two for the sleep (its command, then
 * its timer firing). An object handler that reads, writes and returns is one commit to create it
 * and one for its state write with its output and End (the attempt lingers for them too).
 */
import { backendOf, sqlRows, startStack, storeKinds, type Stack } from '../support/stack.js';
import test from 'ava';

const CALLS = 20;

async function metrics(stack: Stack): Promise<string> {
  return (await fetch(`${stack.server.admin}/metrics`)).text();
}

async function commits(stack: Stack, backend: string): Promise<number> {
  // The series appears with the first commit.
  return Number(
    new RegExp(`^redstate_store_commit_duration_seconds_count\\{backend="${backend}"\\} (\\d+)$`, 'm').exec(
      await metrics(stack),
    )?.[1] ?? 0,
  );
}

/** Group commits: one fsync each on the embedded store. */
async function groups(stack: Stack, backend: string): Promise<number> {
  return Number(
    new RegExp(`^redstate_store_group_commit_size_count\\{backend="${backend}"\\} (\\d+)$`, 'm').exec(
      await metrics(stack),
    )?.[1] ?? 0,
  );
}

/** Handler look-ups in the registry, and entries into the runtime's face (every operation summed). */
async function lookupsAndEntries(stack: Stack): Promise<{ lookups: number; entries: number }> {
  const text = await metrics(stack);
  const lookups = Number(/^redstate_registry_handler_lookups_total (\d+)$/m.exec(text)?.[1] ?? 0);
  const entries = [...text.matchAll(/^redstate_runtime_operations_total\{operation="[^"]+"\} (\d+)$/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
  return { lookups, entries };
}

for (const store of storeKinds) {
  test(`${store}: an ingress call resolves its handler once and enters the runtime once`, async (t) => {
    const stack = await startStack(store);
    try {
      const before = await lookupsAndEntries(stack);
      for (let i = 0; i < CALLS; i++)
        t.is((await stack.ingress.post('restate/call/Durable/greet', { json: 'x' })).statusCode, 200);
      for (let i = 0; i < CALLS; i++)
        t.is((await stack.ingress.post('restate/call/Tally/one/add', { json: 1 })).statusCode, 200);
      const after = await lookupsAndEntries(stack);
      t.is((after.lookups - before.lookups) / (2 * CALLS), 1, 'registry look-ups per call');
      t.is((after.entries - before.entries) / (2 * CALLS), 1, 'runtime entries per call');
    } finally {
      await stack.stop();
    }
  });

  test(`${store}: a no-op call is 2 commits, a 3-step call 7, an object add 2`, async (t) => {
    const stack = await startStack(store);
    try {
      const perCall = async (path: string, body: (i: number) => unknown) => {
        const before = await commits(stack, backendOf(store));
        // One at a time: commits of concurrent calls would still be counted one by one, but
        // sequential calls keep the count free of retries caused by load.
        for (let i = 0; i < CALLS; i++)
          t.is((await stack.ingress.post(`restate/call/${path}`, { json: body(i) })).statusCode, 200);
        return ((await commits(stack, backendOf(store))) - before) / CALLS;
      };
      t.is(await perCall('Durable/greet', () => 'x'), 2);
      // 7 unless a proposed result or an End came later than the linger (a loaded machine): then
      // one more for that call.
      const steps = await perCall('Durable/steps', (i) => ({ tag: `${store}-count-${i}`, sleepMs: 0 }));
      t.true(steps >= 7 && steps < 7.5, `commits per 3-step call: ${steps}`);
      const add = await perCall('Tally/one/add', () => 1);
      t.true(add >= 2 && add < 2.5, `commits per object add: ${add}`);
      // Nothing else committed meanwhile (no retries, no stray writes): every call completed once.
      const [row] = await sqlRows(stack.admin, "SELECT count(*) AS n FROM sys_invocation WHERE status = 'completed'");
      t.is(Number(row?.['n']), 3 * CALLS);
    } finally {
      await stack.stop();
    }
  });
}

// Callers queued on one busy key: each one's inbox entry waits (lazy) for the holder's
// completion, whose lock change is computed from it while it is on its way, and both are
// written in one transaction. One at a time, each add would be two fsyncs.
test('embedded: adds queued on one key share their group commits with the completions', async (t) => {
  const stack = await startStack('embedded');
  try {
    const CALLERS = 16;
    const EACH = 8;
    const caller = async () => {
      for (let i = 0; i < EACH; i++)
        t.is((await stack.ingress.post('restate/call/Tally/busy/add', { json: 1 })).statusCode, 200);
    };
    await caller();
    const before = { commits: await commits(stack, 'embedded'), groups: await groups(stack, 'embedded') };
    await Promise.all(Array.from({ length: CALLERS }, caller));
    const adds = CALLERS * EACH;
    const perAdd = (await commits(stack, 'embedded')) - before.commits;
    const groupsPerAdd = ((await groups(stack, 'embedded')) - before.groups) / adds;
    t.true(perAdd / adds >= 2 && perAdd / adds < 2.5, `commits per add: ${perAdd / adds}`);
    t.log(`group commits per add: ${groupsPerAdd}`);
    t.true(groupsPerAdd < 1.5, `group commits per add: ${groupsPerAdd}`);
    const [row] = await sqlRows(
      stack.admin,
      "SELECT value_utf8 FROM state WHERE service_name = 'Tally' AND service_key = 'busy' AND key = 'n'",
    );
    t.is(row?.['value_utf8'], String(adds + EACH), 'every add applied once');
  } finally {
    await stack.stop();
  }
});
