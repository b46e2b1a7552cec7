/**
 * Request identity (Restate's `request-identity-private-key-pem-file`): with a key configured,
 * every request to a deployment is signed, and SDK endpoints that only accept requests signed
 * with that key (`identityKeys`, checked by the SDK's own verification) register and serve
 * calls, over h2c and over HTTP/1.1; without the key, registration fails with META0003.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import got from 'got';
import { RequestSigner } from '../../src/protocol/request-identity.js';
import { startService } from '../support/sdk-service.js';
import { startRedstate } from '../support/server.js';
import { jsonLines } from '../support/log-lines.js';

const client = (prefixUrl: string) =>
  got.extend({ prefixUrl, throwHttpErrors: false, retry: { limit: 0 }, timeout: { request: 30_000 } });

test('a signing server registers and calls identity-checking endpoints; an unsigned one is refused', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'redstate-identity-'));
  const keyFile = path.join(dir, 'private.pem');
  const { privateKey } = generateKeyPairSync('ed25519');
  await writeFile(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const keyId = RequestSigner.fromPemFile(keyFile).keyId;
  const h2 = await startService('identity.mjs', { env: { IDENTITY_KEYS: keyId } });
  const h1 = await startService('identity.mjs', { env: { IDENTITY_KEYS: keyId, HTTP1: '1' } });
  const signing = await startRedstate({ env: { REDSTATE_REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: keyFile } });
  const unsigned = await startRedstate();
  try {
    t.true(
      jsonLines(signing.output()).some(
        (l) => l.level === 'info' && l.msg === `request identity: requests to deployments are signed with ${keyId}`,
      ),
      signing.output(),
    );
    const admin = client(signing.admin);
    const ingress = client(signing.ingress);
    const registered = await admin.post('deployments', { json: { uri: h2.url } });
    t.is(registered.statusCode, 201, registered.body);
    t.is((await ingress.post('restate/call/Greeter/greet', { json: 'Ada' })).body, '"hi Ada"');
    t.is((await ingress.post('restate/call/Counter/k%2F1/add', { json: 2 })).body, '2');
    t.is((await ingress.post('restate/call/Counter/k%2F1/add', { json: 3 })).body, '5');

    const http11 = await admin.post('deployments', { json: { uri: h1.url, use_http_11: true, force: true } });
    t.is(http11.statusCode, 201, http11.body);
    t.is((await ingress.post('restate/call/Greeter/greet', { json: 'Bo' })).body, '"hi Bo"');
    t.is((await ingress.post('restate/call/Counter/k%2F1/add', { json: 1 })).body, '6');

    const refused = await client(unsigned.admin).post('deployments', { json: { uri: h2.url } });
    t.is(refused.statusCode, 500);
    const body = JSON.parse(refused.body) as { message: string; restate_code: string };
    t.is(body.restate_code, 'META0003');
    t.regex(body.message, /got status code '401'/);
  } finally {
    await Promise.all([signing.stop(), unsigned.stop(), h2.stop(), h1.stop()]);
    await rm(dir, { recursive: true, force: true });
  }
});
