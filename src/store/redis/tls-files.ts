/**
 * TLS for `rediss://` (and `rediss-cluster://`) beyond the system's trust store: a private CA to trust, and a client
 * certificate for servers that ask for one (Redis does by default, `tls-auth-clients yes`).
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { parseRedisUrl } from '../../redis-url.js';

export interface TlsFiles {
  ca?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
}

/** The TLS options for `url`, or undefined when no file is given. Throws with a clear message. */
export function tlsOptions(url: string, files: TlsFiles): ConnectionOptions | undefined {
  const given = Object.entries(files).filter((e): e is [string, string] => e[1] !== undefined);
  if (given.length === 0) return undefined;
  if (!parseRedisUrl(url).tls)
    throw new Error(`Redis TLS files are given, but the Redis URL does not start with rediss:// or rediss-cluster://`);
  if ((files.cert === undefined) !== (files.key === undefined))
    throw new Error('a Redis TLS client certificate needs its key, and the key its certificate');
  const options: ConnectionOptions = {};
  for (const [name, path] of given) {
    try {
      options[name as keyof TlsFiles] = readFileSync(path, 'utf8');
    } catch (err) {
      throw new Error(`cannot read the Redis TLS ${name} file '${path}': ${(err as Error).message}`);
    }
  }
  return options;
}
