/**
 * Request identity, scheme v1 (Restate's `request-identity-private-key-pem-file`): every
 * request to a deployment, discovery and invocation streams alike, carries
 *
 *   x-restate-signature-scheme: v1
 *   x-restate-jwt-v1: <JWT>
 *
 * The JWT is EdDSA (Ed25519) with header `{"typ":"JWT","alg":"EdDSA","kid":"publickeyv1_…"}`
 * and claims `aud` (the request's path), `nbf`/`iat`/`exp` (now −60 s, now, now +60 s), and
 * `sub` (the service key) when there is one. An SDK endpoint given `identityKeys:
 * ["publickeyv1_…"]` checks the signature, the time window and that `aud` is its own
 * `/discover` or `/invoke/{service}/{handler}` path (the SDK drops a prefix before those).
 * The key id is `publickeyv1_` + base58 of the 32-byte public key, which Restate logs at start.
 *
 * Without a key Restate 1.7.12 sends no identity header at all, and so do we.
 */
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import bs58 from 'bs58';

/** Seconds before and after now that a token is valid: Restate's leeway. */
const LEEWAY_SECONDS = 60;

export class RequestIdentityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestIdentityError';
  }
}

const base64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');

export class RequestSigner {
  private readonly header: string;

  private constructor(
    private readonly key: KeyObject,
    /** `publickeyv1_…`: what SDK endpoints are given as `identityKeys`. */
    readonly keyId: string,
  ) {
    this.header = base64url(JSON.stringify({ typ: 'JWT', alg: 'EdDSA', kid: keyId }));
  }

  /** One Ed25519 private key in PEM (PKCS#8, `openssl genpkey -algorithm ed25519`). */
  static fromPemFile(path: string): RequestSigner {
    let pem: string;
    try {
      pem = readFileSync(path, 'utf8');
    } catch (err) {
      throw new RequestIdentityError(`cannot read the request identity key '${path}': ${(err as Error).message}`);
    }
    const blocks = pem.match(/-----BEGIN [A-Z ]+-----/g) ?? [];
    if (blocks.length !== 1)
      throw new RequestIdentityError(`'${path}' must hold exactly one PEM private key, found ${blocks.length}`);
    let key: KeyObject;
    try {
      key = createPrivateKey(pem);
    } catch (err) {
      throw new RequestIdentityError(`'${path}' is not a PEM private key: ${(err as Error).message}`);
    }
    if (key.asymmetricKeyType !== 'ed25519') {
      throw new RequestIdentityError(
        `'${path}' holds a ${key.asymmetricKeyType ?? 'non-asymmetric'} key; request identity needs an Ed25519 key`,
      );
    }
    const jwk = createPublicKey(key).export({ format: 'jwk' });
    const publicKey = Buffer.from(jwk.x ?? '', 'base64url');
    return new RequestSigner(key, `publickeyv1_${bs58.encode(publicKey)}`);
  }

  /** The identity headers for a request to `path` (the URL's path, prefix included). */
  headers(path: string, serviceKey?: string, nowMs = Date.now()): Record<string, string> {
    const now = Math.floor(nowMs / 1000);
    const claims = {
      aud: path,
      exp: now + LEEWAY_SECONDS,
      iat: now,
      nbf: now - LEEWAY_SECONDS,
      ...(serviceKey !== undefined ? { sub: serviceKey } : {}),
    };
    const signingInput = `${this.header}.${base64url(JSON.stringify(claims))}`;
    const signature = sign(null, Buffer.from(signingInput), this.key);
    return { 'x-restate-signature-scheme': 'v1', 'x-restate-jwt-v1': `${signingInput}.${base64url(signature)}` };
  }
}
