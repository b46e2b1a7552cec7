/**
 * What `REDSTATE_REDIS_URL` names: one Redis (`redis://`, `rediss://`, passed to ioredis as is)
 * or a Redis Cluster, given by seed nodes that ioredis `Cluster` asks for the slot map:
 *
 *   redis-cluster://[user:password@]host1:port1,host2:port2,...   (rediss-cluster:// for TLS)
 *   redis://host1:port1,redis://host2:port2,...                    (several seeds, same credentials)
 *
 * A pure parser: config.ts checks the value at start with it, the store connects with it.
 */

export interface RedisSeed {
  host: string;
  port: number;
}

export type RedisTarget =
  | { kind: 'single'; url: string; tls: boolean }
  | { kind: 'cluster'; seeds: RedisSeed[]; tls: boolean; username?: string; password?: string };

const CLUSTER_SCHEMES: Record<string, boolean> = { 'redis-cluster:': false, 'rediss-cluster:': true };
const SINGLE_SCHEMES: Record<string, boolean> = { 'redis:': false, 'rediss:': true };

export const REDIS_URL_FORMS = 'redis://host:port, rediss://host:port, redis-cluster://host:port,host:port,… or several redis:// URLs separated by commas';

/** Throws an Error that says which form was expected; never shows the password. */
export function parseRedisUrl(raw: string): RedisTarget {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(raw)?.[0].toLowerCase();
  if (scheme !== undefined && scheme in CLUSTER_SCHEMES) return clusterOf(raw.slice(scheme.length + 2), CLUSTER_SCHEMES[scheme]!, raw);
  if (scheme === undefined || !(scheme in SINGLE_SCHEMES)) throw new Error(`must start with redis://, rediss://, redis-cluster:// or rediss-cluster:// (${REDIS_URL_FORMS})`);
  const urls = raw.split(',').map((part) => part.trim());
  if (urls.length === 1) {
    parsed(raw);
    return { kind: 'single', url: raw, tls: SINGLE_SCHEMES[scheme]! };
  }
  const seeds = urls.map(parsed);
  const tls = seeds.map((u) => SINGLE_SCHEMES[u.protocol]);
  if (tls.some((t) => t === undefined) || new Set(tls).size > 1) throw new Error(`several seeds must all be redis:// or all be rediss:// (${REDIS_URL_FORMS})`);
  const withAuth = seeds.find((u) => u.username !== '' || u.password !== '');
  return {
    kind: 'cluster',
    seeds: seeds.map(seedOf),
    tls: tls[0]!,
    ...credentials(withAuth?.username ?? '', withAuth?.password ?? ''),
  };
}

function clusterOf(rest: string, tls: boolean, raw: string): RedisTarget {
  const at = rest.lastIndexOf('@');
  const userinfo = at < 0 ? '' : rest.slice(0, at);
  const hosts = (at < 0 ? rest : rest.slice(at + 1)).replace(/\/(0)?$/, '');
  if (hosts.includes('/')) throw new Error(`a Redis Cluster has only database 0: '${withoutPassword(raw)}' names another`);
  const parts = hosts.split(',').map((h) => h.trim());
  if (parts.some((h) => h === '')) throw new Error(`'${withoutPassword(raw)}' lists an empty seed (${REDIS_URL_FORMS})`);
  const colon = userinfo.indexOf(':');
  const username = colon < 0 ? userinfo : userinfo.slice(0, colon);
  const password = colon < 0 ? '' : userinfo.slice(colon + 1);
  return { kind: 'cluster', seeds: parts.map((h) => seedOf(parsed(`redis://${h}`))), tls, ...credentials(username, password) };
}

function parsed(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`'${withoutPassword(text)}' is not a URL (${REDIS_URL_FORMS})`);
  }
  if (url.hostname === '') throw new Error(`'${withoutPassword(text)}' names no host (${REDIS_URL_FORMS})`);
  return url;
}

function seedOf(url: URL): RedisSeed {
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port === '' ? 6379 : Number(url.port) };
}

function credentials(username: string, password: string): { username?: string; password?: string } {
  return {
    ...(username !== '' ? { username: decodeURIComponent(username) } : {}),
    ...(password !== '' ? { password: decodeURIComponent(password) } : {}),
  };
}

/** The URL for logs and errors: passwords dropped, user names and seeds kept. */
export function withoutPassword(url: string): string {
  return url.replace(/\/\/([^:@/,]*)(?::[^@/]*)?@/g, (_, user: string) => (user === '' ? '//' : `//${user}@`));
}
