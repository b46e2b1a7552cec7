/**
 * What `REDSTATE_REDIS_URL` names: one Redis (`redis://`, `rediss://`, passed to ioredis as is),
 * a Redis Cluster, given by seed nodes that ioredis `Cluster` asks for the slot map, or a
 * primary watched by Redis Sentinel, given by the sentinels and the primary's name, which
 * ioredis asks for the primary's address on every (re)connection:
 *
 *   redis-cluster://[user:password@]host1:port1,host2:port2,...   (rediss-cluster:// for TLS)
 *   redis://host1:port1,redis://host2:port2,...                    (several seeds, same credentials)
 *   redis-sentinel://[user:password@]host1:26379,host2:26379/name  (rediss-sentinel:// for TLS;
 *                     the credentials are the primary's; ?sentinelPassword=… for the sentinels)
 *
 * A pure parser: config.ts checks the value at start with it, the store connects with it.
 */

export interface RedisSeed {
  host: string;
  port: number;
}

export type RedisTarget =
  | { kind: 'single'; url: string; tls: boolean }
  | { kind: 'cluster'; seeds: RedisSeed[]; tls: boolean; username?: string; password?: string }
  | {
      kind: 'sentinel';
      sentinels: RedisSeed[];
      name: string;
      tls: boolean;
      username?: string;
      password?: string;
      sentinelPassword?: string;
    };

const CLUSTER_SCHEMES: Record<string, boolean> = { 'redis-cluster:': false, 'rediss-cluster:': true };
const SENTINEL_SCHEMES: Record<string, boolean> = { 'redis-sentinel:': false, 'rediss-sentinel:': true };
const SINGLE_SCHEMES: Record<string, boolean> = { 'redis:': false, 'rediss:': true };

export const REDIS_URL_FORMS =
  'redis://host:port, rediss://host:port, redis-cluster://host:port,host:port,…, redis-sentinel://host:port,host:port,…/name or several redis:// URLs separated by commas';

/** Throws an Error that says which form was expected; never shows the password. */
export function parseRedisUrl(raw: string): RedisTarget {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(raw)?.[0].toLowerCase();
  if (scheme !== undefined && scheme in CLUSTER_SCHEMES)
    return clusterOf(raw.slice(scheme.length + 2), CLUSTER_SCHEMES[scheme]!, raw);
  if (scheme !== undefined && scheme in SENTINEL_SCHEMES)
    return sentinelOf(raw.slice(scheme.length + 2), SENTINEL_SCHEMES[scheme]!, raw);
  if (scheme === undefined || !(scheme in SINGLE_SCHEMES)) {
    throw new Error(
      `must start with redis://, rediss://, redis-cluster://, rediss-cluster://, redis-sentinel:// or rediss-sentinel:// (${REDIS_URL_FORMS})`,
    );
  }
  const urls = raw.split(',').map((part) => part.trim());
  if (urls.length === 1) {
    parsed(raw);
    return { kind: 'single', url: raw, tls: SINGLE_SCHEMES[scheme]! };
  }
  const seeds = urls.map(parsed);
  const tls = seeds.map((u) => SINGLE_SCHEMES[u.protocol]);
  if (tls.some((t) => t === undefined) || new Set(tls).size > 1)
    throw new Error(`several seeds must all be redis:// or all be rediss:// (${REDIS_URL_FORMS})`);
  const withAuth = seeds.find((u) => u.username !== '' || u.password !== '');
  return {
    kind: 'cluster',
    seeds: seeds.map(seedOf),
    tls: tls[0]!,
    ...credentials(withAuth?.username ?? '', withAuth?.password ?? ''),
  };
}

function clusterOf(rest: string, tls: boolean, raw: string): RedisTarget {
  const { userinfo, hosts } = splitUserinfo(rest);
  const list = hosts.replace(/\/(0)?$/, '');
  if (list.includes('/'))
    throw new Error(`a Redis Cluster has only database 0: '${withoutPassword(raw)}' names another`);
  return { kind: 'cluster', seeds: seedList(list, raw), tls, ...credentialsOf(userinfo) };
}

function sentinelOf(rest: string, tls: boolean, raw: string): RedisTarget {
  const { userinfo, hosts } = splitUserinfo(rest);
  const [path, query = ''] = hosts.split('?', 2) as [string, string?];
  const slash = path.indexOf('/');
  const name = slash < 0 ? '' : decodeURIComponent(path.slice(slash + 1));
  if (name === '' || name.includes('/'))
    throw new Error(
      `'${withoutPassword(raw)}' must end with the primary's name, as Sentinel knows it: …/mymaster (${REDIS_URL_FORMS})`,
    );
  const sentinelPassword = new URLSearchParams(query).get('sentinelPassword') ?? '';
  return {
    kind: 'sentinel',
    sentinels: seedList(path.slice(0, slash), raw, 26379),
    name,
    tls,
    ...credentialsOf(userinfo),
    ...(sentinelPassword !== '' ? { sentinelPassword } : {}),
  };
}

function splitUserinfo(rest: string): { userinfo: string; hosts: string } {
  // The host list has no '@'; a password may.
  const at = rest.lastIndexOf('@');
  return { userinfo: at < 0 ? '' : rest.slice(0, at), hosts: at < 0 ? rest : rest.slice(at + 1) };
}

function seedList(hosts: string, raw: string, defaultPort = 6379): RedisSeed[] {
  const parts = hosts.split(',').map((h) => h.trim());
  if (parts.some((h) => h === ''))
    throw new Error(`'${withoutPassword(raw)}' lists an empty host (${REDIS_URL_FORMS})`);
  return parts.map((h) => seedOf(parsed(`redis://${h}`), defaultPort));
}

function credentialsOf(userinfo: string): { username?: string; password?: string } {
  const colon = userinfo.indexOf(':');
  return credentials(colon < 0 ? userinfo : userinfo.slice(0, colon), colon < 0 ? '' : userinfo.slice(colon + 1));
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

function seedOf(url: URL, defaultPort = 6379): RedisSeed {
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port === '' ? defaultPort : Number(url.port) };
}

function credentials(username: string, password: string): { username?: string; password?: string } {
  return {
    ...(username !== '' ? { username: decodeURIComponent(username) } : {}),
    ...(password !== '' ? { password: decodeURIComponent(password) } : {}),
  };
}

/** The URL for logs and errors: passwords dropped, user names and seeds kept. */
export function withoutPassword(url: string): string {
  return url
    .replace(/\/\/([^:@/,]*)(?::[^@/]*)?@/g, (_, user: string) => (user === '' ? '//' : `//${user}@`))
    .replace(/([?&]sentinelPassword=)[^&]*/g, '$1…');
}
