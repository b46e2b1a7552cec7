/**
 * The official `restate` CLI 1.7.12 (npm `@restatedev/restate`) against the server process
 * (reference-behavior.md §4): it first asks `GET /version`, then uses `/v4/…` admin paths,
 * Arrow for `sql` and its counts, JSON for its other queries. One embedded-store stack with
 * two deployments (Durable from durable.mjs, Counter from objects.mjs); the assertions are on
 * what the CLI prints.
 */
import anyTest, { type TestFn } from 'ava';
import { cliWorld, restate, type CliWorld } from '../support/cli.js';
import { sqlRows } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<CliWorld>;
cliWorld(test);

async function send(w: CliWorld, target: string, body: unknown): Promise<string> {
  const res = await w.stack.ingress.post(`restate/send/${target}`, { json: body });
  return (JSON.parse(res.body) as { invocationId: string }).invocationId;
}

async function status(w: CliWorld, id: string): Promise<string | undefined> {
  const [row] = await sqlRows(w.stack.admin, `SELECT status FROM sys_invocation WHERE id = '${id}'`);
  return row?.['status'] as string | undefined;
}

test.serial('whoami, deployments and services', async (t) => {
  const w = t.context;
  const who = await restate(w, 'whoami');
  t.is(who.code, 0, who.out);
  t.true(who.out.includes(`[OK]: Admin Service '${w.stack.server.admin}/' is healthy!`), who.out);

  const deployments = await restate(w, 'deployments', 'list');
  t.is(deployments.code, 0, deployments.out);
  t.regex(deployments.out, new RegExp(`${w.objectsDeployment}[\\s\\S]*- Counter \\[1\\]`));
  t.regex(deployments.out, /- Durable \[1\]/);

  const described = await restate(w, 'deployments', 'describe', w.objectsDeployment);
  t.is(described.code, 0, described.out);
  t.regex(described.out, new RegExp(`ID:\\s+${w.objectsDeployment}`));
  t.regex(described.out, /- Counter\s+Type: VirtualObject/);

  const registered = await restate(w, '--yes', 'deployments', 'register', w.objects.url, '--force');
  t.is(registered.code, 0, registered.out);
  t.true(
    registered.out.includes(`This deployment is already known to the server under the ID "${w.objectsDeployment}"`),
    registered.out,
  );
  t.true(registered.out.includes('[OK]: DEPLOYMENT:'), registered.out);
  t.regex(registered.out, new RegExp(`Deployment ID:\\s+${w.objectsDeployment}`));
  t.regex(registered.out, /Counter\s+2/);

  const services = await restate(w, 'services', 'list');
  t.is(services.code, 0, services.out);
  t.regex(services.out, /\[public\]\s+Counter\s+2\s+virtual object/);
  t.regex(services.out, /\[public\]\s+Durable\s+1\s/);

  const counter = await restate(w, 'services', 'describe', 'Counter');
  t.is(counter.code, 0, counter.out);
  t.regex(counter.out, /Service type:\s+VirtualObject/);
  t.regex(counter.out, /Revision:\s+2/);

  const config = await restate(w, 'services', 'config', 'view', 'Counter');
  t.is(config.code, 0, config.out);
  t.regex(config.out, /Max attempts:\s+70/);
  t.regex(config.out, /On max attempts:\s+Pause/);
});

test.serial('invocations: list, describe, pause, resume, cancel, kill', async (t) => {
  const w = t.context;
  const a = await send(w, 'Durable/sleepy', 30_000);
  const b = await send(w, 'Durable/sleepy', 30_000);
  await waitFor(async () => (await status(w, a)) === 'running' && (await status(w, b)) === 'running', 5000);

  const list = await restate(w, 'invocations', 'list');
  t.is(list.code, 0, list.out);
  t.regex(list.out, new RegExp(`${a}\\s+Target:\\s+Durable/sleepy\\s+Status:\\s+running`));
  t.true(list.out.includes(b));

  const described = await restate(w, 'invocations', 'describe', a);
  t.is(described.code, 0, described.out);
  t.regex(described.out, /Target:\s+Durable\/sleepy/);
  // Each entry with the time it was stored (reference-behavior.md §4, cli-runs.txt).
  t.regex(described.out, /#0 \[\d{4}-\d\d-\d\d [\d:.]+ \+00:00\] Command: Input/);
  t.regex(described.out, /#1 \[\d{4}-\d\d-\d\d [\d:.]+ \+00:00\] Command: Sleep/);

  const paused = await restate(w, '--yes', 'invocations', 'pause', a);
  t.is(paused.code, 0, paused.out);
  t.true(paused.out.includes('[OK]: Paused 1 invocations'), paused.out);
  t.is(await status(w, a), 'paused');
  const resumed = await restate(w, '--yes', 'invocations', 'resume', a);
  t.true(resumed.out.includes('[OK]: Resumed 1 invocations'), resumed.out);
  await waitFor(async () => (await status(w, a)) === 'running', 5000);

  const cancelled = await restate(w, '--yes', 'invocations', 'cancel', a);
  t.is(cancelled.code, 0, cancelled.out);
  t.true(cancelled.out.includes('[OK]: Cancelled 1 invocations'), cancelled.out);
  const killed = await restate(w, '--yes', 'invocations', 'kill', b);
  t.is(killed.code, 0, killed.out);
  t.regex(killed.out, /\[OK\]: Killed 1 invocations/);
  await waitFor(async () => (await status(w, a)) === 'completed' && (await status(w, b)) === 'completed', 5000);

  const all = await restate(w, 'invocations', 'list', '--all');
  t.regex(all.out, new RegExp(`${a}[\\s\\S]*?Error:\\s+\\[409\\] Cancelled`));
  t.regex(all.out, new RegExp(`${b}[\\s\\S]*?Error:\\s+\\[409\\] killed`));
});

test.serial('invocations: restart-as-new and purge; sql', async (t) => {
  const w = t.context;
  const call = await w.stack.ingress.post('restate/call/Durable/greet', { json: 'cli' });
  const id = String(call.headers['x-restate-id']);

  const restarted = await restate(w, '--yes', 'invocations', 'restart-as-new', id);
  t.is(restarted.code, 0, restarted.out);
  t.true(restarted.out.includes('[OK]: Restarted 1 invocations'), restarted.out);
  const m = new RegExp(`${id}\\s+(inv_[0-9A-Za-z]{34})`).exec(restarted.out);
  t.truthy(m, restarted.out);
  const newId = m![1]!;
  t.is((await w.stack.ingress.get(`restate/attach/${newId}`)).body, '"hi cli"');

  const purged = await restate(w, '--yes', 'invocations', 'purge', id);
  t.is(purged.code, 0, purged.out);
  t.true(purged.out.includes('[OK]: Purged 1 invocations'), purged.out);
  t.is((await w.stack.ingress.get(`restate/output/${id}`)).statusCode, 404);

  const sql = await restate(w, 'sql', 'select id, status from sys_invocation');
  t.is(sql.code, 0, sql.out);
  t.regex(sql.out, /ID\s+STATUS/);
  t.regex(sql.out, new RegExp(`${newId}\\s+completed`));
  t.false(sql.out.includes(id));
  t.regex(sql.out, /\d+ rows\. Query took/);
});

test.serial('state get, kv get, state clear', async (t) => {
  const w = t.context;
  const add = await w.stack.ingress.post('restate/call/Counter/cli1/add', { json: { delta: 42 } });
  t.is(add.body, '42');

  const got = await restate(w, 'state', 'get', 'Counter', 'cli1');
  t.is(got.code, 0, got.out);
  t.regex(got.out, /Key\s+cli1/);
  t.regex(got.out, /count\s+42/);
  const kv = await restate(w, 'kv', 'get', 'Counter', 'cli1');
  t.regex(kv.out, /count\s+42/);

  const cleared = await restate(w, '--yes', 'state', 'clear', 'Counter/cli1');
  t.is(cleared.code, 0, cleared.out);
  t.regex(cleared.out, /Counter\/cli1\s+\[count\]/);
  t.true(cleared.out.includes('Enqueued successfully for processing'), cleared.out);
  await waitFor(
    async () => (await w.stack.ingress.post('restate/call/Counter/cli1/get', { json: null })).body === '0',
    5000,
  );
  const after = await restate(w, 'state', 'get', 'Counter', 'cli1');
  t.notRegex(after.out, /count\s+42/);
});
