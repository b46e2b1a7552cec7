/**
 * README's quick start works as written: its `greeter.mjs` block, run with plain `node` on Node
 * 22 (the suite's Node in CI), is registered and called through the server. On an older Node
 * the SDK needs Promise.withResolvers, which the test support's polyfill then provides.
 */
import test from 'ava';
import got from 'got';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../support/ports.js';
import { projectRoot } from '../../src/project-root.js';
import { supportFile } from '../support/sdk-service.js';
import { startRedstate } from '../support/server.js';
import { waitFor } from '../support/wait.js';

async function quickStartFile(): Promise<string> {
  const readme = await readFile(path.join(projectRoot(), 'README.md'), 'utf8');
  const m = /<!-- quick-start:greeter\.mjs[^>]*-->\n```js\n([\s\S]*?)```/.exec(readme);
  if (!m) throw new Error('README.md has no quick-start:greeter.mjs block');
  return m[1]!;
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** Node before 22 lacks Promise.withResolvers, which the SDK calls. */
const polyfill = Number(process.versions.node.split('.')[0]) < 22 ? ['--import', supportFile('poly.mjs')] : [];

test(`README's greeter.mjs serves, registers and answers on Node ${process.version}${polyfill.length > 0 ? ' (with the polyfill)' : ''}`, async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'redstate-quick-start-'));
  // As `npm init -y && npm install @restatedev/restate-sdk` leaves it (the SDK from our node_modules).
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'greeter', version: '1.0.0' }));
  await symlink(path.join(projectRoot(), 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  await writeFile(path.join(dir, 'greeter.mjs'), await quickStartFile());

  const port = await freePort();
  let output = '';
  const greeter = spawn(process.execPath, [...polyfill, 'greeter.mjs'], {
    cwd: dir,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  greeter.stdout.on('data', (d: Buffer) => (output += d.toString()));
  greeter.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const server = await startRedstate();
  t.teardown(async () => {
    greeter.kill('SIGTERM');
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });
  await waitFor(async () => greeter.exitCode === null && (await listening(port)), 15_000).catch(() => {
    throw new Error(`greeter.mjs did not listen on ${port}:\n${output}`);
  });

  const registered = await got.post(`${server.admin}/deployments`, {
    json: { uri: `http://localhost:${port}` },
    throwHttpErrors: false,
  });
  t.is(registered.statusCode, 201, registered.body);
  const res = await got.post(`${server.ingress}/restate/call/Greeter/greet`, {
    json: 'Ada',
    throwHttpErrors: false,
    timeout: { request: 15_000 },
  });
  t.is(res.statusCode, 200, `${res.body}\n${output}`);
  t.is(res.body, '"Hello, Ada!"');
});
