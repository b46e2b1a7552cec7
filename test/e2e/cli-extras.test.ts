/**
 * The official `restate` CLI 1.7.12 against the server process for the commands of
 * reference-behavior.md §4 that cli.test.ts leaves out: `kafka-clusters list`,
 * `subscriptions list`, `rules list|set|delete`, `vqueues list` and `deployments remove`.
 * One embedded-store stack, one deployment (objects.mjs); assertions on what the CLI prints
 * and on the server's state afterwards.
 */
import anyTest, { type TestFn } from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot, startService, type StartedService } from '../support/sdk-service.js';
import { startStack, type Stack } from '../support/stack.js';

interface World {
  stack: Stack;
  objects: StartedService;
  deployment: string;
  configHome: string;
}

const test = anyTest as TestFn<World>;

const CLI = path.join(projectRoot(), 'node_modules', '.bin', 'restate');

interface Run {
  code: number;
  /** stdout and stderr, without colours. */
  out: string;
}

function restate(w: World, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      CLI,
      args,
      {
        env: {
          ...process.env,
          RESTATE_ADMIN_URL: w.stack.server.admin,
          RESTATE_INGRESS_URL: w.stack.server.ingress,
          RESTATE_CLI_CONFIG_HOME: w.configHome,
          NO_COLOR: '1',
          COLUMNS: '200',
        },
        timeout: 30_000,
      },
      (err, stdout, stderr) => {
        // eslint-disable-next-line no-control-regex
        const out = `${stdout}\n${stderr}`.replace(/\u001b\[[0-9;]*m/g, '');
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out });
      },
    );
  });
}

test.before(async (t) => {
  const stack = await startStack('embedded');
  const objects = await startService('objects.mjs');
  const res = await stack.admin.post('deployments', { json: { uri: objects.url } });
  if (res.statusCode !== 201) throw new Error(`registration failed: ${res.statusCode} ${res.body}`);
  const configHome = await mkdtemp(path.join(tmpdir(), 'restate-cli-'));
  t.context = { stack, objects, deployment: (JSON.parse(res.body) as { id: string }).id, configHome };
});

test.after.always(async (t) => {
  await Promise.all([t.context.stack.stop(), t.context.objects.stop()]);
  await rm(t.context.configHome, { recursive: true, force: true });
});

test.serial('kafka-clusters list and subscriptions list', async (t) => {
  const w = t.context;
  const empty = await restate(w, 'kafka-clusters', 'list');
  t.is(empty.code, 0, empty.out);
  t.false(empty.out.includes('my-cluster'), empty.out);
  const noSubs = await restate(w, 'subscriptions', 'list');
  t.is(noSubs.code, 0, noSubs.out);
  t.true(noSubs.out.includes('No subscriptions registered.'), noSubs.out);

  const cluster = await w.stack.admin.post('kafka-clusters', { json: { name: 'my-cluster', properties: { 'bootstrap.servers': 'localhost:19092' } } });
  t.is(cluster.statusCode, 201, cluster.body);
  const sub = await w.stack.admin.post('subscriptions', { json: { source: 'kafka://my-cluster/my-topic', sink: 'service://Counter/add' } });
  t.is(sub.statusCode, 201, sub.body);
  const id = (JSON.parse(sub.body) as { id: string }).id;

  const clusters = await restate(w, 'kafka-clusters', 'list');
  t.is(clusters.code, 0, clusters.out);
  t.regex(clusters.out, /NAME\s+BROKERS\s+PROPERTIES\s+CREATED-AT/);
  t.regex(clusters.out, /my-cluster\s+localhost:19092\s+1\s/);
  const subs = await restate(w, 'subscriptions', 'list');
  t.is(subs.code, 0, subs.out);
  t.regex(subs.out, new RegExp(`${id}\\s+kafka://my-cluster/my-topic\\s+service://Counter/add\\s+2\\s`));
});

test.serial('rules list, set and delete', async (t) => {
  const w = t.context;
  const empty = await restate(w, 'rules', 'list');
  t.is(empty.code, 0, empty.out);
  t.true(empty.out.includes('No rules defined.'), empty.out);

  const set = await restate(w, 'rules', 'set', 'scope1/*', '--concurrency', '3', '--description', 'test', '--yes');
  t.is(set.code, 0, set.out);
  t.true(set.out.includes("[OK]: Created rule 'scope1/*' (version v1)"), set.out);
  const listed = await restate(w, 'rules', 'list');
  t.is(listed.code, 0, listed.out);
  t.regex(listed.out, /scope1\/\*\s+3\s+no/);

  const deleted = await restate(w, 'rules', 'delete', 'scope1/*', '--yes');
  t.is(deleted.code, 0, deleted.out);
  t.true(deleted.out.includes("[OK]: Deleted rule 'scope1/*'"), deleted.out);
  const after = await restate(w, 'rules', 'list');
  t.true(after.out.includes('No rules defined.'), after.out);
});

test.serial('vqueues list', async (t) => {
  const w = t.context;
  const listed = await restate(w, 'vqueues', 'list');
  t.is(listed.code, 0, listed.out);
  t.true(listed.out.includes('No virtual queues found.'), listed.out);
});

test.serial('deployments remove', async (t) => {
  const w = t.context;
  // The CLI itself refuses an Active deployment (latest revision of its services) without --force.
  const refused = await restate(w, 'deployments', 'remove', w.deployment, '--yes');
  t.not(refused.code, 0, refused.out);
  t.true(refused.out.includes('Deployment is still Active.'), refused.out);
  t.is((await w.stack.admin.get(`deployments/${w.deployment}`)).statusCode, 200);

  const removed = await restate(w, 'deployments', 'remove', w.deployment, '--force', '--yes');
  t.is(removed.code, 0, removed.out);
  const res = await w.stack.admin.get(`deployments/${w.deployment}`);
  t.is(res.statusCode, 404);
});
