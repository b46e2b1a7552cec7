/**
 * Picks the store backend: Redis when a URL is configured (production), else the embedded
 * store under `dataDir`, so a fresh machine runs with nothing else installed (design.md, "Store").
 */
import { EmbeddedStore } from './embedded/embedded-store.js';
import { RedisStore, type RedisStoreOptions } from './redis/redis-store.js';
import type { Store } from './types.js';

export * from './types.js';
export { EmbeddedStore } from './embedded/embedded-store.js';
export { RedisStore, type RedisStoreOptions } from './redis/redis-store.js';

export async function openStore(opts: { redisUrl?: string; dataDir: string; redis?: RedisStoreOptions }): Promise<Store> {
  return opts.redisUrl ? RedisStore.open(opts.redisUrl, opts.redis) : EmbeddedStore.open(opts.dataDir);
}
