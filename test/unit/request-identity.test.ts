/**
 * The request identity signer (src/protocol/request-identity.ts): key ids as Restate derives
 * them, and tokens an Ed25519 verifier accepts with the claims the SDK checks.
 */
import { generateKeyPairSync, verify } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { RequestIdentityError, RequestSigner } from '../../src/protocol/request-identity.js';

// The key pair of Restate's own signer test, with the key id Restate derives from it.
const RESTATE_TEST_KEY =
  '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIPe++4ZTPQDF81otpoU/mOGHC2vOAVp9WbiCblvn3nXO\n-----END PRIVATE KEY-----\n';
const RESTATE_TEST_KEY_ID = 'publickeyv1_AfQwmwfgEZhrWpvv8N52SHpRtZqGGaFr4AZN6qtYWSiY';

async function withFile(text: string, body: (file: string) => unknown): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'redstate-key-'));
  try {
    await writeFile(path.join(dir, 'key.pem'), text);
    await body(path.join(dir, 'key.pem'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('the key id is publickeyv1_ + base58 of the public key, as Restate logs it', async (t) => {
  await withFile(RESTATE_TEST_KEY, (file) => t.is(RequestSigner.fromPemFile(file).keyId, RESTATE_TEST_KEY_ID));
});

test('headers carry scheme v1 and an EdDSA JWT whose signature and claims verify', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  await withFile(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, (file) => {
    const signer = RequestSigner.fromPemFile(file);
    const headers = signer.headers('/prefix/invoke/Counter/add', 'k/1', 1_700_000_000_500);
    t.is(headers['x-restate-signature-scheme'], 'v1');
    const [header, claims, signature] = headers['x-restate-jwt-v1']!.split('.');
    t.deepEqual(JSON.parse(Buffer.from(header!, 'base64url').toString()), {
      typ: 'JWT',
      alg: 'EdDSA',
      kid: signer.keyId,
    });
    t.deepEqual(JSON.parse(Buffer.from(claims!, 'base64url').toString()), {
      aud: '/prefix/invoke/Counter/add',
      exp: 1_700_000_060,
      iat: 1_700_000_000,
      nbf: 1_699_999_940,
      sub: 'k/1',
    });
    t.true(verify(null, Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature!, 'base64url')));
  });
});

test('keys that are not one Ed25519 private key are refused at start with a clear message', async (t) => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string;
  await withFile(rsa, (file) => {
    t.throws(() => RequestSigner.fromPemFile(file), {
      instanceOf: RequestIdentityError,
      message: /holds a rsa key; request identity needs an Ed25519 key/,
    });
  });
  await withFile(RESTATE_TEST_KEY + RESTATE_TEST_KEY, (file) => {
    t.throws(() => RequestSigner.fromPemFile(file), { message: /exactly one PEM private key, found 2/ });
  });
  t.throws(() => RequestSigner.fromPemFile('/nonexistent/key.pem'), {
    message: /cannot read the request identity key/,
  });
});
