/**
 * The `restate` CLI 1.7.12's own queries with every filter flag of `invocations list`, and
 * `invocations describe` (issue 15, point 5), over a store holding calls, sends, delayed sends,
 * a workflow and objects in every status. What each command lists was compared, id for id, with
 * the same commands run against Restate 1.7.12 (from npm) holding the same invocations
 * (test/support/services/programs.mjs); the only differences were ids, times and ULIDs. Both
 * stores.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { restate } from '../support/cli.js';
import { sendTo } from '../support/context.js';
import { sqlRows, startStack, storeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

interface World {
  stack: Stack;
  configHome: string;
  /** Invocation ids by what they are (see `populate`). */
  ids: Record<string, string>;
  deployment: string;
}

const test = anyTest as TestFn<Record<string, World>>;

async function statusOf(stack: Stack, id: string): Promise<string | undefined> {
  return (await sqlRows(stack.admin, `SELECT status FROM sys_invocation WHERE id = '${id}'`))[0]?.['status'] as
    string | undefined;
}

/** One invocation in each status, made the way users make them. */
async function populate(stack: Stack): Promise<Record<string, string>> {
  const spawned = await stack.ingress.post('restate/call/Parent/p1/spawn', { json: { delayMs: 600_000 } });
  const children = JSON.parse(spawned.body) as Record<string, string>;
  const failed = await stack.ingress.post('restate/call/Child/fail', { json: 'x' });
  const ids: Record<string, string> = {
    parent: spawned.headers['x-restate-id'] as string,
    ...children,
    failed: failed.headers['x-restate-id'] as string,
    running: await sendTo(stack, 'SignalWaiter/one', { tag: 'cli-running', name: 'go' }),
    suspended: await sendTo(stack, 'SuspendingSignalWaiter/one', { tag: 'cli-suspended', name: 'go' }),
    scheduled: await sendTo(stack, 'Scheduled/work?delay=10m', 'cli-scheduled'),
    holder: await sendTo(stack, 'Queue/q1/hold', 'release'),
  };
  ids['pending'] = await sendTo(stack, 'Queue/q1/after', 'cli-pending');
  ids['backingOff'] = await sendTo(stack, 'Child/flaky', 'x');
  ids['paused'] = await sendTo(stack, 'Child/pauses', 'x');
  const expected: Record<string, string> = {
    running: 'running',
    suspended: 'suspended',
    pending: 'pending',
    backingOff: 'backing-off',
    paused: 'paused',
    scheduled: 'scheduled',
  };
  await waitFor(async () => {
    for (const [name, status] of Object.entries(expected))
      if ((await statusOf(stack, ids[name]!)) !== status) return false;
    return true;
  }, 20_000);
  return ids;
}

test.before(async (t) => {
  const worlds = await Promise.all(
    storeKinds.map(async (store) => {
      const stack = await startStack(store, { serviceFile: 'programs.mjs' });
      const configHome = await mkdtemp(path.join(tmpdir(), 'restate-cli-'));
      const deployment = (
        JSON.parse((await stack.admin.get('deployments')).body) as { deployments: Array<{ id: string }> }
      ).deployments[0]!.id;
      return { stack, configHome, deployment, ids: await populate(stack) };
    }),
  );
  t.context = Object.fromEntries(storeKinds.map((k, i) => [k, worlds[i]!]));
});

test.after.always(async (t) => {
  for (const w of Object.values(t.context)) {
    await w.stack.stop();
    await rm(w.configHome, { recursive: true, force: true });
  }
});

/** The invocation ids `invocations list …` printed, in order, and what it printed. */
async function listed(
  t: ExecutionContext<Record<string, World>>,
  w: World,
  ...flags: string[]
): Promise<{ ids: string[]; out: string }> {
  const run = await restate(w, 'invocations', 'list', ...flags);
  t.is(run.code, 0, run.out);
  const ids = [...run.out.matchAll(/❯ \[[^\]]+\] (inv_\w+)/g)].map((m) => m[1]!);
  t.true(run.out.includes(`Showing ${ids.length}/`), run.out);
  return { ids, out: run.out };
}

const sorted = (ids: string[]) => [...ids].sort();

for (const store of storeKinds) {
  test(`${store}: invocations list with each filter flag`, async (t) => {
    const w = t.context[store]!;
    const i = w.ids;
    const active = ['running', 'suspended', 'scheduled', 'holder', 'pending', 'backingOff', 'paused', 'delayed'].map(
      (k) => i[k]!,
    );
    const all = Object.values(i);
    const of = (...names: string[]) => sorted(names.map((n) => i[n]!));

    t.deepEqual(sorted((await listed(t, w)).ids), sorted(active));
    t.deepEqual(sorted((await listed(t, w, '--all')).ids), sorted(all));
    // Newest first, and the oldest first with --oldest-first.
    t.deepEqual((await listed(t, w, '--all', '--limit', '3')).ids, [i['paused'], i['backingOff'], i['pending']]);
    t.deepEqual((await listed(t, w, '--all', '--oldest-first', '--limit', '2')).ids, [i['parent'], i['call']]);
    t.deepEqual(sorted((await listed(t, w, '--service', 'Child')).ids), of('delayed', 'backingOff', 'paused'));
    t.deepEqual(
      sorted((await listed(t, w, '--service', 'Child,Queue', '--all')).ids),
      of('call', 'send', 'delayed', 'failed', 'holder', 'pending', 'backingOff', 'paused'),
    );
    t.deepEqual(
      sorted((await listed(t, w, '--handler', 'hello', '--all')).ids),
      of('call', 'send', 'delayed', 'objectSend'),
    );
    t.deepEqual(sorted((await listed(t, w, '--key', 'k', '--all')).ids), of('objectSend'));
    t.deepEqual(sorted((await listed(t, w, '--key', 'q1')).ids), of('holder', 'pending'));
    t.deepEqual(
      sorted((await listed(t, w, '--virtual-objects-only', '--all')).ids),
      of('parent', 'objectSend', 'holder', 'pending'),
    );
    t.deepEqual((await listed(t, w, '--zombie')).ids, []);
    t.deepEqual(
      sorted((await listed(t, w, '--deployment', w.deployment)).ids),
      of('running', 'suspended', 'holder', 'backingOff'),
    );
    t.deepEqual(
      sorted((await listed(t, w, '--status', 'pending,scheduled')).ids),
      of('scheduled', 'pending', 'delayed'),
    );
    t.deepEqual(sorted((await listed(t, w, '--status', 'backing-off')).ids), of('backingOff'));
    t.deepEqual(sorted((await listed(t, w, '--status', 'paused')).ids), of('paused'));
    t.deepEqual((await listed(t, w, '--status', 'ready')).ids, []);
    t.deepEqual(
      sorted((await listed(t, w, '--status', 'completed')).ids),
      of('parent', 'call', 'send', 'objectSend', 'workflow', 'failed'),
    );
    t.deepEqual(
      sorted((await listed(t, w, '--completion-result', 'success')).ids),
      of('parent', 'call', 'send', 'objectSend', 'workflow'),
    );
    t.deepEqual(sorted((await listed(t, w, '--completion-result', 'failure')).ids), of('failed'));
  });

  test(`${store}: a listed child names its parent; a scheduled one is not pinned to a deployment`, async (t) => {
    const w = t.context[store]!;
    const { out } = await listed(t, w, '--service', 'Child');
    const block = (id: string) => out.slice(out.indexOf(id), out.indexOf('❯', out.indexOf(id)) >>> 0 || undefined);
    t.regex(
      block(w.ids['delayed']!),
      new RegExp(`Status:\\s+scheduled[\\s\\S]*Invoked by:\\s+Parent/p1/spawn ${w.ids['parent']}`),
    );
    t.notRegex(block(w.ids['delayed']!), /Deployment:/);
    // Restate pins a deployment with the SDK's first stored entry: a handler that failed before
    // any shows the deployment of its last attempt, not as required.
    t.regex(block(w.ids['backingOff']!), new RegExp(`Deployment:\\s+${w.deployment}  using`));
    t.notRegex(block(w.ids['paused']!), /Deployment:/);
  });

  test(`${store}: invocations describe shows each entry's time and each call's target and callee`, async (t) => {
    const w = t.context[store]!;
    const run = await restate(w, 'invocations', 'describe', w.ids['parent']!);
    t.is(run.code, 0, run.out);
    const at = '\\[\\d{4}-\\d\\d-\\d\\d [\\d:.]+ \\+00:00\\]';
    const i = w.ids;
    t.regex(run.out, new RegExp(`#0 ${at} Command: Input`));
    t.regex(run.out, new RegExp(`#1 ${at} Command: Call Child/hello ${i['call']}`));
    t.regex(run.out, new RegExp(`#4 ${at} Command: OneWayCall Child/hello ${i['send']}`));
    t.regex(run.out, new RegExp(`#6 ${at} Command: OneWayCall Child/hello ${i['delayed']}`));
    t.regex(run.out, new RegExp(`#8 ${at} Command: OneWayCall ChildObject/k/hello ${i['objectSend']}`));
    t.regex(run.out, new RegExp(`#10 ${at} Command: Call ChildWorkflow/p1/run ${i['workflow']}`));
    t.regex(run.out, new RegExp(`#13 ${at} Command: Output`));

    const child = await restate(w, 'invocations', 'describe', i['delayed']!);
    t.is(child.code, 0, child.out);
    t.regex(child.out, new RegExp(`Parent/p1/spawn[\\s\\S]*${i['parent']}`));
    t.regex(child.out, /Status:\s+scheduled/);
  });
}
