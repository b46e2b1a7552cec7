/**
 * The lock record of an object key (runtime/kernel/object-keys.ts) as the Redis store holds it: the
 * holder and the inbox the server will go by, which /query does not show (sys_keyed_service_status
 * lists only holders that have not completed). Read through the project's own store code, for
 * the evidence of a key that stays locked.
 */
import { loadConfig } from '../../../src/config.js';
import { partitionKeyOf } from '../../../src/protocol/ids.js';
import { partitionOf } from '../../../src/model/partitioning.js';
import { objectRecordKey, readObjectKey, RecordKind } from '../../../src/model/persisted.js';
import { RedisStore } from '../../../src/store/redis/redis-store.js';

export interface LockRecord {
  holder?: string;
  inbox: string[];
}

export async function readLockRecords(
  redisUrl: string,
  service: string,
  keys: string[],
): Promise<Map<string, LockRecord | undefined>> {
  const { partitions } = loadConfig({}, []);
  const store = await RedisStore.open(redisUrl);
  try {
    const records = await Promise.all(
      keys.map(async (key) => {
        const raw = await store.getRecord(
          partitionOf(partitionKeyOf(key), partitions),
          RecordKind.objectKey,
          objectRecordKey(service, key),
        );
        return raw === undefined ? undefined : readObjectKey(raw).context;
      }),
    );
    return new Map(keys.map((k, i) => [k, records[i]]));
  } finally {
    await store.close();
  }
}
