/**
 * Picks the store backend: Redis when a URL is configured (production), else the embedded
 * store under `dataDir`, so a fresh machine runs with nothing else installed (design.md, "Store").
 * Only the backend in use is loaded: lmdb and ioredis each add to the start-up time.
 */
import type { RedisStoreOptions } from './redis/redis-store.js';
import type { Store } from './types.js';

export * from './types.js';

export async function openStore(opts: {
  redisUrl?: string;
  dataDir: string;
  redis?: RedisStoreOptions;
  /** The embedded store's files are shared with other workers (src/workers.ts). */
  shared?: boolean;
}): Promise<Store> {
  if (opts.redisUrl) {
    const { RedisStore } = await import('./redis/redis-store.js');
    return RedisStore.open(opts.redisUrl, opts.redis);
  }
  const { EmbeddedStore } = await import('./embedded/embedded-store.js');
  return EmbeddedStore.open(opts.dataDir, { shared: !!opts.shared });
}
