/**
 * Every command the `restate` CLI 1.7.12 lists in its `--help` (and its subcommands'), run
 * against redstate. `COMMANDS` says where each one runs: in this file, in one of the other CLI
 * test files, or nowhere because it has nothing to do with a server (and why); the first test
 * fails when the CLI lists a command the table does not. The commands run here were first run
 * against restate-server 1.7.12 (from npm) with the same services and the same edits: the
 * requests the CLI made and what it printed were the same, ids and times aside; the assertions
 * are on those printed answers and on the server's state afterwards.
 *
 * `EDITOR` is a small script that edits the file the CLI opens with `sed` (`EDIT_SED`), or
 * writes it whole (`EDIT_WRITE`), so the interactive `edit` commands run unattended.
 */
import anyTest, { type TestFn } from 'ava';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { restate, type CliTarget } from '../support/cli.js';
import { startService, type StartedService } from '../support/sdk-service.js';
import { startStack, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

/** Where each leaf command runs: a test file of test/e2e/, or why it runs nowhere. */
const COMMANDS: Record<string, string> = {
  whoami: 'cli.test.ts',
  'services list': 'cli.test.ts',
  'services describe': 'cli.test.ts',
  'services status': 'cli-commands.test.ts',
  'services config view': 'cli.test.ts',
  'services config edit': 'cli-commands.test.ts',
  'services config patch': 'cli-commands.test.ts',
  'deployments list': 'cli.test.ts',
  'deployments register': 'cli.test.ts',
  'deployments describe': 'cli.test.ts',
  'deployments remove': 'cli-extras.test.ts',
  'kafka-clusters list': 'cli-extras.test.ts',
  'kafka-clusters create': 'cli-commands.test.ts',
  'kafka-clusters describe': 'cli-commands.test.ts',
  'kafka-clusters edit': 'cli-commands.test.ts',
  'kafka-clusters patch': 'cli-commands.test.ts',
  'kafka-clusters delete': 'cli-commands.test.ts',
  'subscriptions list': 'cli-extras.test.ts',
  'subscriptions create': 'cli-commands.test.ts',
  'subscriptions describe': 'cli-commands.test.ts',
  'subscriptions delete': 'cli-commands.test.ts',
  'invocations list': 'cli-queries.test.ts',
  'invocations describe': 'cli-queries.test.ts',
  'invocations cancel': 'cli.test.ts',
  'invocations kill': 'cli.test.ts',
  'invocations purge': 'cli.test.ts',
  'invocations restart-as-new': 'cli.test.ts',
  'invocations resume': 'cli.test.ts',
  'invocations pause': 'cli.test.ts',
  'vqueues list': 'cli-extras.test.ts',
  'vqueues describe': 'cli-commands.test.ts',
  'rules list': 'cli-extras.test.ts',
  'rules set': 'cli-extras.test.ts',
  'rules enable': 'cli-commands.test.ts',
  'rules disable': 'cli-commands.test.ts',
  'rules delete': 'cli-extras.test.ts',
  sql: 'cli.test.ts',
  'state get': 'cli.test.ts',
  'state edit': 'cli-commands.test.ts',
  'state patch': 'cli-commands.test.ts',
  'state clear': 'cli.test.ts',
  'config list-environments': 'cli-commands.test.ts',
  'config use-environment': 'cli-commands.test.ts',
  'config view': 'cli-commands.test.ts',
  'config edit': 'cli-commands.test.ts',
  'completions generate': 'cli-commands.test.ts',
  'completions install': 'cli-commands.test.ts',
  dev: 'none: starts the restate-server built into the CLI binary, not a server of ours',
  example: 'none: downloads an example project from GitHub; it talks to no Restate server',
  'cloud login': 'none: signs in to Restate Cloud in a browser',
  'cloud environments configure': 'none: needs a Restate Cloud account',
  'cloud environments tunnel': 'none: needs a Restate Cloud account',
};

interface World extends CliTarget {
  flow: StartedService;
  /** The directory of the editor script and the fake HOME. */
  dir: string;
}

const test = anyTest as TestFn<World>;

test.before(async (t) => {
  // Vqueues on, for `vqueues describe`; the zod and xstate services, and Flow (a handler that holds its slot).
  const stack: Stack = await startStack('embedded', {
    serviceFile: 'ecosystem.mjs',
    env: { REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES: 'true' },
  });
  const flow = await startService('flow.mjs');
  const registered = await stack.admin.post('deployments', { json: { uri: flow.url } });
  if (registered.statusCode !== 201)
    throw new Error(`registration failed: ${registered.statusCode} ${registered.body}`);
  const dir = await mkdtemp(path.join(tmpdir(), 'restate-cli-commands-'));
  const editor = path.join(dir, 'editor.sh');
  await writeFile(
    editor,
    '#!/bin/sh\nif [ -n "$EDIT_WRITE" ]; then printf \'%s\\n\' "$EDIT_WRITE" > "$1"; else sed -i "$EDIT_SED" "$1"; fi\n',
  );
  await chmod(editor, 0o755);
  await mkdir(path.join(dir, 'config'));
  t.context = {
    stack,
    flow,
    dir,
    configHome: path.join(dir, 'config'),
    env: { EDITOR: editor, VISUAL: editor, HOME: path.join(dir, 'home') },
  };
});

test.after.always(async (t) => {
  await Promise.all([t.context.stack.stop(), t.context.flow.stop()]);
  await rm(t.context.dir, { recursive: true, force: true });
});

const cli = (w: World, ...args: string[]) => restate(w, ...args);
const edited = (w: World, edit: { EDIT_SED: string } | { EDIT_WRITE: string }, ...args: string[]) =>
  restate({ ...w, env: { ...w.env, ...edit } }, ...args);

/** The leaf commands of `restate <prefix> --help`, one level after the other. */
async function leafCommands(w: World, prefix: string[] = []): Promise<string[]> {
  const help = await cli(w, ...prefix, '--help');
  const section = /\nCommands:\n([\s\S]*?)\n\n/.exec(help.out)?.[1];
  if (section === undefined) return [prefix.join(' ')];
  // Command names sit two spaces in; continuation lines of a description are indented further.
  const names = [...section.matchAll(/^ {2}([a-z][a-z0-9-]*)/gm)].map((m) => m[1]!).filter((n) => n !== 'help');
  return (await Promise.all(names.map((n) => leafCommands(w, [...prefix, n])))).flat();
}

test.serial('every command --help lists is run against redstate, or says why not', async (t) => {
  const leaves = await leafCommands(t.context);
  t.deepEqual([...leaves].sort(), Object.keys(COMMANDS).sort());
  // Each command said to run elsewhere appears in that file as the CLI's arguments.
  for (const [command, where] of Object.entries(COMMANDS)) {
    if (where.startsWith('none:') || where === 'cli-commands.test.ts') continue;
    const source = await readFile(path.join(projectRoot(), 'test', 'e2e', where), 'utf8');
    t.true(
      source.includes(
        command
          .split(' ')
          .map((w) => `'${w}'`)
          .join(', '),
      ),
      `${command} in ${where}`,
    );
  }
});

test.serial('services status: queued, running and completed invocations per handler, and the keys held', async (t) => {
  const w = t.context;
  t.is((await w.stack.ingress.post('ZCounter/status-key/add', { json: { by: 1 } })).statusCode, 200);
  t.is((await w.stack.ingress.post('ZGreeter/greet', { json: { name: 'Ada' } })).statusCode, 200);
  // Its FIRST_VALUE(id ORDER BY created_at) … GROUP BY queries are DataFusion aggregates.
  const all = await cli(w, 'services', 'status');
  t.is(all.code, 0, all.out);
  t.regex(all.out, /PENDING\s+SCHEDULED\s+READY\s+RUNNING\s+BACKING-OFF\s+SUSPENDED\s+OLDEST-NON-SUSPENDED-INVOCATION/);
  t.regex(all.out, /ZCounter virtual object\s+add\s+-\s+-\s+-\s+-\s+-\s+-\s+inv_\w+ completed/);
  t.regex(all.out, /ZGreeter\s+age\s+-/);
  t.regex(all.out, /Active Keys:[\s\S]*ZCounter \(1 active keys\)\s+status-key\s+0\s+inv_\w+ \(completed\)\s+add/);
  const one = await cli(w, 'services', 'status', 'ZGreeter');
  t.is(one.code, 0, one.out);
  t.regex(one.out, /greet\s+-\s+-\s+-\s+-\s+-\s+-\s+inv_\w+ completed/);
  t.false(one.out.includes('ZCounter'), one.out);
});

test.serial('services config patch and edit', async (t) => {
  const w = t.context;
  const patched = await cli(w, '--yes', 'services', 'config', 'patch', 'ZGreeter', '--idempotency-retention', '2h');
  t.is(patched.code, 0, patched.out);
  t.regex(patched.out, /Idempotent requests retention:\s+2h/);
  const editedConfig = await edited(
    w,
    { EDIT_SED: '$a journal_retention = "3h"' },
    '--yes',
    'services',
    'config',
    'edit',
    'ZGreeter',
  );
  t.is(editedConfig.code, 0, editedConfig.out);
  t.regex(editedConfig.out, /Journal retention:\s+3h/);
  const service = JSON.parse((await w.stack.admin.get('services/ZGreeter')).body) as Record<string, unknown>;
  t.is(service['idempotency_retention'], '2h');
  t.is(service['journal_retention'], '3h');
});

test.serial('state patch and edit', async (t) => {
  const w = t.context;
  const get = async () => (await w.stack.ingress.post('ZCounter/state-key/get')).body;
  t.is((await w.stack.ingress.post('ZCounter/state-key/add', { json: { by: 2 } })).body, '2');
  const patched = await cli(
    w,
    '--yes',
    'state',
    'patch',
    'ZCounter',
    'state-key',
    '--patch',
    '[{"op":"replace","path":"/count","value":7}]',
  );
  t.is(patched.code, 0, patched.out);
  t.regex(patched.out, /New State:[\s\S]*count\s+7[\s\S]*Successfully submitted state update\./);
  await waitFor(async () => (await get()) === '7', 5000);
  const editedState = await edited(w, { EDIT_SED: 's/7/9/' }, '--yes', 'state', 'edit', 'ZCounter', 'state-key');
  t.is(editedState.code, 0, editedState.out);
  t.true(editedState.out.includes('Successfully submitted state update.'), editedState.out);
  await waitFor(async () => (await get()) === '9', 5000);
});

test.serial(
  'kafka-clusters create, describe, patch, edit, delete; subscriptions create, describe, delete',
  async (t) => {
    const w = t.context;
    const created = await cli(
      w,
      '--yes',
      'kafka-clusters',
      'create',
      'my-cluster',
      'bootstrap.servers=localhost:19092',
    );
    t.is(created.code, 0, created.out);
    t.true(created.out.includes('[OK]: Kafka cluster my-cluster created'), created.out);
    const described = await cli(w, 'kafka-clusters', 'describe', 'my-cluster');
    t.is(described.code, 0, described.out);
    t.regex(described.out, /Properties:\s+1\s[\s\S]*Subscriptions:\s+0\s[\s\S]*bootstrap\.servers\s+localhost:19092/);
    const patched = await cli(w, '--yes', 'kafka-clusters', 'patch', 'my-cluster', '--set', 'client.id=x');
    t.is(patched.code, 0, patched.out);
    t.true(patched.out.includes('[OK]: Kafka cluster my-cluster updated'), patched.out);
    const editedCluster = await edited(
      w,
      { EDIT_SED: 's/^client.id=.*/client.id=y/' },
      '--yes',
      'kafka-clusters',
      'edit',
      'my-cluster',
    );
    t.is(editedCluster.code, 0, editedCluster.out);
    t.true(editedCluster.out.includes('[OK]: Kafka cluster my-cluster updated'), editedCluster.out);
    const cluster = JSON.parse((await w.stack.admin.get('kafka-clusters/my-cluster')).body) as { properties: object };
    t.deepEqual(cluster.properties, { 'bootstrap.servers': 'localhost:19092', 'client.id': 'y' });

    const subscribed = await cli(
      w,
      '--yes',
      'subscriptions',
      'create',
      'kafka://my-cluster/orders',
      'service://ZCounter/add',
      'group.id=g1',
    );
    t.is(subscribed.code, 0, subscribed.out);
    const id = /\[OK\]: Subscription (sub_\w+) created/.exec(subscribed.out)?.[1];
    t.truthy(id, subscribed.out);
    const sub = await cli(w, 'subscriptions', 'describe', id!);
    t.is(sub.code, 0, sub.out);
    // The cluster names its client, so the subscription gets no default client.id (as in the reference).
    t.regex(
      sub.out,
      /Source:\s+kafka:\/\/my-cluster\/orders[\s\S]*Kafka brokers:\s+localhost:19092[\s\S]*group\.id\s+g1/,
    );
    t.false(sub.out.includes('client.id'), sub.out);
    const orphaning = await cli(w, '--yes', 'kafka-clusters', 'delete', 'my-cluster');
    t.not(orphaning.code, 0, orphaning.out);
    t.true(
      orphaning.out.includes('Cluster my-cluster has 1 subscription(s) attached. Re-run with --force to orphan them.'),
      orphaning.out,
    );
    const unsubscribed = await cli(w, '--yes', 'subscriptions', 'delete', id!);
    t.is(unsubscribed.code, 0, unsubscribed.out);
    t.is((await w.stack.admin.get(`subscriptions/${id!}`)).statusCode, 404);
    const deleted = await cli(w, '--yes', 'kafka-clusters', 'delete', 'my-cluster');
    t.is(deleted.code, 0, deleted.out);
    t.true(deleted.out.includes('[OK]: Kafka cluster my-cluster deleted'), deleted.out);
    t.is((await w.stack.admin.get('kafka-clusters')).body, '{"clusters":[]}');
  },
);

test.serial('rules disable and enable; vqueues describe lists the queue and its entries', async (t) => {
  const w = t.context;
  t.is((await cli(w, '--yes', 'rules', 'set', 'one', '--concurrency', '1')).code, 0);
  const disabled = await cli(w, '--yes', 'rules', 'disable', 'one');
  t.is(disabled.code, 0, disabled.out);
  t.true(disabled.out.includes("[OK]: Rule 'one' disabled"), disabled.out);
  const enabled = await cli(w, '--yes', 'rules', 'enable', 'one');
  t.is(enabled.code, 0, enabled.out);
  t.true(enabled.out.includes("[OK]: Rule 'one' enabled"), enabled.out);

  // One Flow/work at a time in scope `one`: the first holds the slot (a 3 s sleep), two wait.
  for (const tag of ['a', 'b', 'c']) {
    const sent = await w.stack.ingress.post('restate/scope/one/send/Flow/work', {
      json: { tag, ms: 3000 },
      headers: { 'x-restate-limit-key': 'lk' },
    });
    t.is(sent.statusCode, 202, sent.body);
  }
  let vqueue = '';
  await waitFor(async () => {
    const rows = await w.stack.admin.post('query', {
      json: { query: "SELECT id FROM sys_vqueue_meta WHERE scope = 'one' AND num_inbox = 2" },
      headers: { accept: 'application/json' },
    });
    vqueue = /"id":"(vq_\w+)"/.exec(rows.body)?.[1] ?? '';
    return vqueue !== '';
  }, 10_000);
  const described = await cli(w, 'vqueues', 'describe', vqueue);
  t.is(described.code, 0, described.out);
  t.regex(described.out, /Service:\s+Flow[\s\S]*Scope:\s+one[\s\S]*Limit key:\s+lk/);
  t.regex(described.out, /INBOX\s+RUNNING\s+SUSPENDED\s+PAUSED\s+FINISHED\s+2\s+1\s+0\s+0\s+0/);
  t.is([...described.out.matchAll(/inv_\w+\s+invocation\s+inbox\s+new\s+false\s+0\s/g)].length, 2, described.out);
  t.regex(described.out, /inv_\w+\s+invocation\s+running\s+started\s+false\s+1\s/);
  t.true(described.out.includes('Showing 3/3 entries.'), described.out);
});

test.serial(
  'config edit, list-environments, use-environment and view; whoami through the chosen environment',
  async (t) => {
    const w = t.context;
    const admin = w.stack.server.admin.replace(/\/?$/, '/');
    const ingress = w.stack.server.ingress.replace(/\/?$/, '/');
    const config = `[redstate]\nadmin_base_url = "${admin}"\ningress_base_url = "${ingress}"`;
    const editedConfig = await edited(w, { EDIT_WRITE: config }, 'config', 'edit');
    t.is(editedConfig.code, 0, editedConfig.out);
    const listed = await cli(w, 'config', 'list-environments');
    t.is(listed.code, 0, listed.out);
    t.regex(listed.out, new RegExp(`redstate\\s+${admin.replace(/[.]/g, '\\.')}`));
    const used = await cli(w, 'config', 'use-environment', 'redstate');
    t.is(used.code, 0, used.out);
    t.true(used.out.includes('to redstate'), used.out);
    const viewed = await cli(w, 'config', 'view');
    t.is(viewed.code, 0, viewed.out);
    t.true(viewed.out.includes(`admin_base_url = "${admin}"`), viewed.out);
    // Without RESTATE_ADMIN_URL the CLI reaches redstate through the environment it was told to use.
    const who = await restate(
      { ...w, env: { ...w.env, RESTATE_ADMIN_URL: undefined, RESTATE_INGRESS_URL: undefined } },
      'whoami',
    );
    t.is(who.code, 0, who.out);
    t.true(who.out.includes(admin), who.out);
  },
);

test.serial('completions generate and install', async (t) => {
  const w = t.context;
  const generated = await cli(w, 'completions', 'generate', 'bash');
  t.is(generated.code, 0, generated.out);
  t.true(generated.out.includes('_restate()'), generated.out.slice(0, 200));
  const installed = await cli(w, 'completions', 'install', 'bash');
  t.is(installed.code, 0, installed.out);
  const file = path.join(w.dir, 'home', '.local', 'share', 'bash-completion', 'completions', 'restate');
  t.true((await readFile(file, 'utf8')).includes('_restate()'));
});
