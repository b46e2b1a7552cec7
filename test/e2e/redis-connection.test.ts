/**
 * Production Redis setups through the server process: a password-protected redis-server
 * (AUTH from the URL), and a redis-server with a TLS port and certificates made here (a private CA,
 * a server certificate for 127.0.0.1 and a client certificate, as Redis asks clients for one by
 * default). A wrong password or an untrusted certificate stops the start with a clear line that
 * never shows the password.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import got from 'got';
import { freePort } from '../support/ports.js';
import { startRedis } from '../support/redis.js';
import { startService } from '../support/sdk-service.js';
import { startRedstate } from '../support/server.js';

const client = (prefixUrl: string) =>
  got.extend({ prefixUrl, throwHttpErrors: false, retry: { limit: 0 }, timeout: { request: 30_000 } });

/** Registers basic.mjs and makes one call: the store is read and written. */
async function registerAndCall(
  t: { is: (a: unknown, b: unknown, m?: string) => void },
  env: Record<string, string>,
): Promise<void> {
  const service = await startService('basic.mjs');
  const server = await startRedstate({ env });
  try {
    const registered = await client(server.admin).post('deployments', { json: { uri: service.url } });
    t.is(registered.statusCode, 201, registered.body);
    t.is((await client(server.ingress).post('restate/call/Greeter/greet', { json: 'tls' })).body, '"hi tls"');
  } finally {
    await server.stop();
    await service.stop();
  }
}

/** `node dist/src/main.js` with `env`, expected to refuse to start: its exit code and stderr. */
function failedStart(env: Record<string, string>): { status: number | null; stderr: string } {
  const dataDir = path.join(tmpdir(), 'redstate-never-started');
  const r = spawnSync(process.execPath, ['dist/src/main.js'], {
    env: {
      ...process.env,
      REDSTATE_HOST: '127.0.0.1',
      REDSTATE_INGRESS_PORT: '0',
      REDSTATE_ADMIN_PORT: '0',
      REDSTATE_DATA_DIR: dataDir,
      ...env,
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stderr: r.stderr };
}

test('a password-protected Redis: AUTH from the URL; a wrong password stops the start without showing it', async (t) => {
  const redis = await startRedis({ password: 'pa55-word' });
  try {
    await registerAndCall(t, { REDSTATE_REDIS_URL: redis.url });
    const wrong = failedStart({ REDSTATE_REDIS_URL: `redis://:not-the-password@127.0.0.1:${redis.port}` });
    t.is(wrong.status, 1);
    t.regex(wrong.stderr, /^redstate: failed to start: .*WRONGPASS/);
    t.false(wrong.stderr.includes('not-the-password'));
  } finally {
    await redis.stop();
  }
});

test('a Redis TLS port with a private CA and client certificates (rediss://)', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'redstate-tls-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=redstate test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  for (const [name, extension] of [
    ['server', 'subjectAltName=IP:127.0.0.1'],
    ['client', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      `/CN=${name}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    );
    await writeFile(file(`${name}.ext`), `${extension}\n`);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    );
  }
  const tlsPort = await freePort();
  const redis = await startRedis({
    args: [
      '--tls-port',
      String(tlsPort),
      '--tls-cert-file',
      file('server.crt'),
      '--tls-key-file',
      file('server.key'),
      '--tls-ca-cert-file',
      file('ca.crt'),
    ],
  });
  try {
    const url = `rediss://127.0.0.1:${tlsPort}`;
    await registerAndCall(t, {
      REDSTATE_REDIS_URL: url,
      REDSTATE_REDIS_TLS_CA_FILE: file('ca.crt'),
      REDSTATE_REDIS_TLS_CERT_FILE: file('client.crt'),
      REDSTATE_REDIS_TLS_KEY_FILE: file('client.key'),
    });
    const untrusted = failedStart({
      REDSTATE_REDIS_URL: url,
      REDSTATE_REDIS_TLS_CERT_FILE: file('client.crt'),
      REDSTATE_REDIS_TLS_KEY_FILE: file('client.key'),
    });
    t.is(untrusted.status, 1);
    t.regex(untrusted.stderr, /^redstate: failed to start: .*certificate/);
    const plain = failedStart({
      REDSTATE_REDIS_URL: `redis://127.0.0.1:${tlsPort}`,
      REDSTATE_REDIS_TLS_CA_FILE: file('ca.crt'),
    });
    t.regex(plain.stderr, /Redis TLS files are given, but the Redis URL does not start with rediss:\/\//);
  } finally {
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
