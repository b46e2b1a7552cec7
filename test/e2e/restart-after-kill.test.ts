/**
 * One process per data dir without false refusals (issue 31): a server SIGKILLed and started
 * again at once on the same data dir, as a supervisor does, always comes up and serves; with
 * a pid file it was refused, naming the killed process (a zombie not yet reaped, or a reused
 * pid, still "answered"). A second live process on the same dir is still refused.
 */
import test from 'ava';
import got from 'got';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startStack, storeKinds } from '../support/stack.js';
import { MAIN, runToExit, startRedstate, type RedstateProcess } from '../support/server.js';
import { waitFor } from '../support/wait.js';

/** Tries per store in `npm test`; `npm run faults` restarts the server under load as well. */
const TRIES = 12;

for (const store of storeKinds) {
  test.serial(`${store}: SIGKILL and an immediate restart on the same data dir always comes up`, async (t) => {
    const stack = await startStack(store, { serviceFile: 'basic.mjs' });
    try {
      let cameUp = 0;
      for (let i = 1; i <= TRIES; i++) {
        await stack.server.crashAndRestart();
        // Up means serving: a read-modify-write on the store's own data.
        const res = await stack.ingress.post('restate/call/Counter/restarts/add', { json: 1 });
        t.is(res.statusCode, 200, res.body);
        t.is(res.body, String(i));
        cameUp++;
      }
      t.log(`${store}: ${TRIES} restarts right after SIGKILL, ${cameUp} came up`);
      t.is(cameUp, TRIES);

      const second = await runToExit({
        ...(stack.redis ? { REDSTATE_REDIS_URL: stack.redis.url } : {}),
        REDSTATE_DATA_DIR: stack.server.dataDir,
        REDSTATE_INGRESS_PORT: '0',
        REDSTATE_ADMIN_PORT: '0',
        REDSTATE_NODE_PORT: '0',
      });
      t.not(second.code, 0);
      t.regex(
        second.output,
        new RegExp(`the data dir .* is in use by another redstate process \\(pid ${stack.server.pid()}\\)`),
      );
      // The refused start left the owner's lock alone.
      t.is((await stack.ingress.post('restate/call/Counter/restarts/add', { json: 1 })).body, String(TRIES + 1));
    } finally {
      await stack.stop();
    }
  });
}

test.serial('an owner killed but not yet reaped (a zombie) does not hold the data dir', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'redstate-data-'));
  // A parent that never waits for its children, as a container's first process may be: the
  // killed server stays a zombie, and its pid keeps "answering", until the parent exits.
  const parent = spawn('sh', ['-c', `"${process.execPath}" "${MAIN}" & echo "pid $!"; exec sleep 600`], {
    env: {
      ...process.env,
      REDSTATE_HOST: '127.0.0.1',
      REDSTATE_DATA_DIR: dataDir,
      REDSTATE_INGRESS_PORT: '0',
      REDSTATE_ADMIN_PORT: '0',
      REDSTATE_NODE_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  parent.stdout.on('data', (d: Buffer) => (output += d.toString()));
  parent.stderr.on('data', (d: Buffer) => (output += d.toString()));
  let server: RedstateProcess | undefined;
  try {
    await waitFor(async () => /ingress on :\d+/.test(output), 30_000);
    const pid = Number(/^pid (\d+)$/m.exec(output)![1]);
    process.kill(pid, 'SIGKILL');
    await waitFor(async () => (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.startsWith('Z'), 10_000);
    server = await startRedstate({ dataDir });
    t.is((await got(`${server.admin}/health`, { throwHttpErrors: false })).statusCode, 200);
  } finally {
    parent.kill('SIGKILL');
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});
