/**
 * Who may reach the server (beyond the reference, which has no authentication): bearer tokens
 * on admin and ingress from the environment and from a tokens file, compared in constant
 * time, 401 with a JSON body and `www-authenticate`, health left open; the official `restate`
 * CLI (RESTATE_AUTH_TOKEN) and the typed clients (`connect({ headers })`) pass a token; and
 * separate bind addresses for ingress and admin.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import got from 'got';
import * as clients from '@restatedev/restate-sdk-clients';
import { projectRoot, startService } from '../support/sdk-service.js';
import { startRedstate } from '../support/server.js';
import { jsonLines } from '../support/log-lines.js';

const client = (prefixUrl: string, token?: string) =>
  got.extend({
    prefixUrl,
    throwHttpErrors: false,
    retry: { limit: 0 },
    timeout: { request: 30_000 },
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
  });

function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      path.join(projectRoot(), 'node_modules', '.bin', 'restate'),
      args,
      { env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

test('bearer tokens guard admin and ingress; health stays open; the CLI and the typed clients pass a token', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'redstate-tokens-'));
  const tokensFile = path.join(dir, 'tokens');
  await writeFile(
    tokensFile,
    '# rotation: the old and the new token both work\nadmin admin-old\ningress ingress-old\nany both-ports\n',
  );
  const service = await startService('basic.mjs');
  const server = await startRedstate({
    env: {
      REDSTATE_ADMIN_TOKEN: 'admin-secret',
      REDSTATE_INGRESS_TOKEN: 'ingress-secret',
      REDSTATE_AUTH_TOKENS_FILE: tokensFile,
    },
  });
  try {
    t.true(
      jsonLines(server.output()).some(
        (l) => l.level === 'info' && l.msg === 'bearer tokens required on: ingress, admin',
      ),
      server.output(),
    );
    const anonymousAdmin = client(server.admin);
    const anonymousIngress = client(server.ingress);

    const missing = await anonymousAdmin.get('deployments');
    t.is(missing.statusCode, 401);
    t.is(missing.headers['www-authenticate'], 'Bearer');
    t.is(missing.headers['content-type'], 'application/json');
    t.deepEqual(JSON.parse(missing.body), {
      message: 'Authentication required: send the header `Authorization: Bearer <token>`.',
      restate_code: null,
    });
    const wrong = await client(server.admin, 'ingress-secret').get('v4/deployments');
    t.is(wrong.statusCode, 401);
    t.deepEqual(JSON.parse(wrong.body), {
      message: 'Authentication failed: the bearer token is not valid.',
      restate_code: null,
    });
    const ingressMissing = await anonymousIngress.post('restate/call/Greeter/greet', { json: 'x' });
    t.is(ingressMissing.statusCode, 401);
    t.is(ingressMissing.headers['x-restate-error-source'], 'ingress');
    t.like(JSON.parse(ingressMissing.body), { code: 401, source: 'ingress' });
    // Open: readiness probes carry no credentials. CORS preflights are answered before auth.
    t.is((await anonymousAdmin.get('health')).statusCode, 200);
    t.is((await anonymousAdmin.get('v4/health')).statusCode, 200);
    t.is((await anonymousIngress.get('restate/health')).statusCode, 200);
    const preflight = await anonymousIngress('restate/call/Greeter/greet', {
      method: 'OPTIONS',
      headers: { origin: 'http://x', 'access-control-request-method': 'POST' },
    });
    t.is(preflight.statusCode, 200);

    t.is(
      (await client(server.admin, 'admin-secret').post('deployments', { json: { uri: service.url } })).statusCode,
      201,
    );
    for (const token of ['ingress-secret', 'ingress-old', 'both-ports']) {
      t.is(
        (await client(server.ingress, token).post('restate/call/Greeter/greet', { json: token })).body,
        `"hi ${token}"`,
        token,
      );
    }
    t.is((await client(server.admin, 'admin-old').get('deployments')).statusCode, 200);
    t.is(
      (await client(server.ingress, 'admin-secret').post('restate/call/Greeter/greet', { json: 'x' })).statusCode,
      401,
    );

    // The typed ingress client.
    const typed = clients.connect({ url: server.ingress, headers: { authorization: 'Bearer ingress-secret' } });
    t.is(
      await typed
        .serviceClient<{ greet: (ctx: unknown, name: string) => Promise<string> }>({ name: 'Greeter' })
        .greet('typed'),
      'hi typed',
    );
    const untyped = clients.connect({ url: server.ingress });
    await t.throwsAsync(
      untyped
        .serviceClient<{ greet: (ctx: unknown, name: string) => Promise<string> }>({ name: 'Greeter' })
        .greet('no'),
    );

    // The official CLI sends RESTATE_AUTH_TOKEN to the admin API.
    const configHome = path.join(dir, 'cli');
    const env = {
      RESTATE_ADMIN_URL: server.admin,
      RESTATE_INGRESS_URL: server.ingress,
      RESTATE_CLI_CONFIG_HOME: configHome,
    };
    const listed = await cli({ ...env, RESTATE_AUTH_TOKEN: 'both-ports' }, 'services', 'list');
    t.is(listed.code, 0, listed.out);
    t.regex(listed.out, /Greeter/);
    const sql = await cli(
      { ...env, RESTATE_AUTH_TOKEN: 'admin-secret' },
      'sql',
      'SELECT name FROM sys_service ORDER BY name',
    );
    t.is(sql.code, 0, sql.out);
    t.regex(sql.out, /Greeter/);
    const denied = await cli(env, 'services', 'list');
    t.not(denied.code, 0, denied.out);
  } finally {
    await server.stop();
    await service.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('ingress and admin bind to their own addresses', async (t) => {
  const server = await startRedstate({ env: { REDSTATE_HOST: '127.0.0.1', REDSTATE_ADMIN_HOST: '127.0.0.2' } });
  try {
    const adminPort = new URL(server.admin).port;
    const ingressPort = new URL(server.ingress).port;
    t.is((await client(`http://127.0.0.2:${adminPort}`).get('health')).statusCode, 200);
    await t.throwsAsync(client(`http://127.0.0.1:${adminPort}`).get('health'), { code: 'ECONNREFUSED' });
    t.is((await client(`http://127.0.0.1:${ingressPort}`).get('restate/health')).statusCode, 200);
    await t.throwsAsync(client(`http://127.0.0.2:${ingressPort}`).get('restate/health'), { code: 'ECONNREFUSED' });
    const version = JSON.parse((await client(`http://127.0.0.2:${adminPort}`).get('version')).body) as {
      ingress_endpoint: string;
    };
    // Clients are sent to the ingress's own address.
    t.regex(version.ingress_endpoint, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  } finally {
    await server.stop();
  }
});
