/**
 * The official `restate` CLI 1.7.12 against the server process for the commands of
 * reference-behavior.md §4 that cli.test.ts leaves out: `kafka-clusters list`,
 * `subscriptions list`, `rules list|set|delete`, `vqueues list` and `deployments remove`.
 * One embedded-store stack, one deployment (objects.mjs); assertions on what the CLI prints
 * and on the server's state afterwards.
 */
import anyTest, { type TestFn } from 'ava';
import { cliWorld, restate, type CliWorld } from '../support/cli.js';

const test = anyTest as TestFn<CliWorld>;
cliWorld(test);

test.serial('kafka-clusters list and subscriptions list', async (t) => {
  const w = t.context;
  const empty = await restate(w, 'kafka-clusters', 'list');
  t.is(empty.code, 0, empty.out);
  t.false(empty.out.includes('my-cluster'), empty.out);
  const noSubs = await restate(w, 'subscriptions', 'list');
  t.is(noSubs.code, 0, noSubs.out);
  t.true(noSubs.out.includes('No subscriptions registered.'), noSubs.out);

  const cluster = await w.stack.admin.post('kafka-clusters', {
    json: { name: 'my-cluster', properties: { 'bootstrap.servers': 'localhost:19092' } },
  });
  t.is(cluster.statusCode, 201, cluster.body);
  const sub = await w.stack.admin.post('subscriptions', {
    json: { source: 'kafka://my-cluster/my-topic', sink: 'service://Counter/add' },
  });
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
  const refused = await restate(w, 'deployments', 'remove', w.objectsDeployment, '--yes');
  t.not(refused.code, 0, refused.out);
  t.true(refused.out.includes('Deployment is still Active.'), refused.out);
  t.is((await w.stack.admin.get(`deployments/${w.objectsDeployment}`)).statusCode, 200);

  const removed = await restate(w, 'deployments', 'remove', w.objectsDeployment, '--force', '--yes');
  t.is(removed.code, 0, removed.out);
  const res = await w.stack.admin.get(`deployments/${w.objectsDeployment}`);
  t.is(res.statusCode, 404);
});
