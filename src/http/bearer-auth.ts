/**
 * Optional bearer-token authentication of the ingress and the admin API. Restate's open-source
 * server has none; this is ours. Tokens come from REDSTATE_ADMIN_TOKEN, REDSTATE_INGRESS_TOKEN
 * and a tokens file; a port without tokens is open, as Restate's are.
 *
 * The health endpoints stay open: load balancers and orchestrators probe readiness without
 * credentials, and they tell no more than whether the server can serve (and, on the ingress,
 * the names of the registered services, which every caller needs to know anyway).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Context, Next } from 'koa';
import type { Config } from '../config.js';
import { ConfigError } from '../config.js';

/** The tokens one port accepts. */
export class TokenSet {
  private readonly digests: Buffer[];

  constructor(tokens: string[]) {
    this.digests = tokens.map(digest);
  }

  get enabled(): boolean {
    return this.digests.length > 0;
  }

  /**
   * Compares digests, so every comparison has the same length, and goes through all tokens,
   * so the time taken tells nothing about which one was close.
   */
  accepts(token: string): boolean {
    const candidate = digest(token);
    let found = false;
    for (const d of this.digests) found = timingSafeEqual(d, candidate) || found;
    return found;
  }
}

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

const SCOPES = ['admin', 'ingress', 'any'] as const;

/** The tokens of both ports, from the config's variables and tokens file. */
export function loadTokens(config: Config): { admin: TokenSet; ingress: TokenSet } {
  const admin = config.adminToken ? [config.adminToken] : [];
  const ingress = config.ingressToken ? [config.ingressToken] : [];
  if (config.authTokensFile) {
    const text = readTokensFile(config.authTokensFile);
    text.split('\n').forEach((raw, i) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const [scope, token, ...rest] = line.split(/\s+/);
      if (!SCOPES.includes(scope as (typeof SCOPES)[number]) || !token || rest.length > 0) {
        throw new ConfigError(`${config.authTokensFile}:${i + 1}: expected '<admin|ingress|any> <token>'`);
      }
      if (scope !== 'ingress') admin.push(token);
      if (scope !== 'admin') ingress.push(token);
    });
  }
  return { admin: new TokenSet(admin), ingress: new TokenSet(ingress) };
}

function readTokensFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`REDSTATE_AUTH_TOKENS_FILE: cannot read '${path}': ${(err as Error).message}`);
  }
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, RFC 6750). */
function bearerToken(ctx: Context): string | undefined {
  const m = /^Bearer +(\S+) *$/i.exec(ctx.get('authorization'));
  return m?.[1];
}

/**
 * Koa middleware: a request to a port with tokens needs one of them, except on `open` paths;
 * otherwise `refuse(message)` is thrown, which the port's error funnel answers 401.
 */
export function requireBearer(tokens: TokenSet, open: (path: string) => boolean, refuse: (message: string) => Error) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (tokens.enabled && !open(ctx.path)) {
      const token = bearerToken(ctx);
      if (token === undefined)
        throw refuse('Authentication required: send the header `Authorization: Bearer <token>`.');
      if (!tokens.accepts(token)) throw refuse('Authentication failed: the bearer token is not valid.');
    }
    await next();
  };
}

/** The header every 401 carries (RFC 6750 §3). */
export const CHALLENGE = { 'www-authenticate': 'Bearer' } as const;
