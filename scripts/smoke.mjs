// A short run of the built server on the Node that runs this script. .ci/run runs the suite on
// Node 22 and this on the machine's Node 20, where the server still has to work: it starts on
// the embedded store (LMDB's native module for this Node), registers an SDK endpoint, calls a
// virtual object twice, reads its state back through /query (DuckDB's native module), and stops
// on SIGTERM. Exits 1, with what the processes printed, on any failure.
//
//   npm run build && node scripts/smoke.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = mkdtempSync(path.join(tmpdir(), 'redstate-smoke-'));
const say = (line) => process.stdout.write(`smoke (Node ${process.version}): ${line}\n`);

/** A child process whose output is kept, and a promise of the first match of `ready` in it. */
function start(args, env, ready) {
  const proc = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const matched = new Promise((resolve, reject) => {
    const look = (chunk) => {
      output += chunk.toString('utf8');
      const m = ready?.exec(output);
      if (m) resolve(m);
    };
    proc.stdout.on('data', look);
    proc.stderr.on('data', look);
    proc.once('exit', (code) => reject(new Error(`${args.at(-1)} exited with ${code}`)));
  });
  matched.catch(() => undefined);
  return { proc, matched, output: () => output };
}

async function until(what, check, ms = 15_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function expect(what, res, body) {
  const text = await res.text();
  if (!res.ok || (body !== undefined && text !== body)) throw new Error(`${what}: ${res.status} ${text}`);
  say(`${what}: ${res.status} ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`);
  return text;
}

const [ingressPort, adminPort, nodePort] = [await freePort(), await freePort(), await freePort()];
const server = start(['--enable-source-maps', 'dist/src/main.js'], {
  REDSTATE_HOST: '127.0.0.1',
  REDSTATE_INGRESS_PORT: String(ingressPort),
  REDSTATE_ADMIN_PORT: String(adminPort),
  REDSTATE_NODE_PORT: String(nodePort),
  REDSTATE_DATA_DIR: dataDir,
  REDSTATE_LOG_FORMAT: 'json',
  REDSTATE_SHUTDOWN_GRACE: '2000',
});
// The SDK needs Promise.withResolvers, which Node 20 lacks: the tests' polyfill.
const service = start(['--import', './test/support/poly.mjs', 'test/support/services/basic.mjs'], {}, /^READY (\d+)$/m);

const admin = `http://127.0.0.1:${adminPort}`;
const ingress = `http://127.0.0.1:${ingressPort}`;
const json = { 'content-type': 'application/json' };
let failed = false;
try {
  const [, servicePort] = await service.matched;
  await until('the server to be healthy', async () => (await fetch(`${admin}/health`)).ok);
  say('healthy');
  await expect(
    'register',
    await fetch(`${admin}/deployments`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ uri: `http://127.0.0.1:${servicePort}` }),
    }),
  );
  await expect(
    'Counter/smoke/add 2',
    await fetch(`${ingress}/restate/call/Counter/smoke/add`, { method: 'POST', headers: json, body: '2' }),
    '2',
  );
  await expect(
    'Counter/smoke/add 3',
    await fetch(`${ingress}/restate/call/Counter/smoke/add`, { method: 'POST', headers: json, body: '3' }),
    '5',
  );
  await expect(
    '/query state',
    await fetch(`${admin}/query`, {
      method: 'POST',
      headers: { ...json, accept: 'application/json' },
      body: JSON.stringify({
        query: "SELECT key, value_utf8 FROM state WHERE service_name = 'Counter' AND service_key = 'smoke'",
      }),
    }),
    '{"rows":[{"key":"count","value_utf8":"5"}]}',
  );
} catch (err) {
  failed = true;
  say(`FAILED: ${err instanceof Error ? err.message : String(err)}`);
  process.stdout.write(`--- server output\n${server.output()}\n--- service output\n${service.output()}\n`);
} finally {
  service.proc.kill('SIGTERM');
  const stopped = new Promise((resolve) => server.proc.once('exit', (code, signal) => resolve({ code, signal })));
  server.proc.kill('SIGTERM');
  const { code } = await stopped;
  if (code !== 0) {
    failed = true;
    say(`the server exited with ${code} on SIGTERM`);
  } else {
    say('stopped cleanly on SIGTERM');
  }
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
