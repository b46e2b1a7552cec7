/**
 * `sys_state_expiry` (ours, issue 26): one row per key whose state expires, from the keys'
 * expiry records (model/state-expiry.ts): when its state is cleared unless written again, and
 * the TTL that set that time.
 */
import { parseObjectRecordKey, RecordKind } from '../model/persisted.js';
import { targetPartitionKey } from '../model/partitioning.js';
import { readStateExpiry } from '../model/state-expiry.js';
import type { Store } from '../store/types.js';
import type { Row } from './result.js';

export async function stateExpiryRows(store: Store, partitions: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (let p = 0; p < partitions; p++) {
    for (const lock of await store.listRecords(p, RecordKind.stateExpiry)) {
      const named = parseObjectRecordKey(lock);
      const expiry = readStateExpiry(await store.getRecord(p, RecordKind.stateExpiry, lock));
      if (!named || !expiry) continue;
      rows.push({
        partition_key: targetPartitionKey({ key: named.key, scope: named.scope }),
        scope: named.scope,
        service_name: named.service,
        service_key: named.key,
        expires_at: expiry.dueAt,
        state_ttl: expiry.ttl,
      });
    }
  }
  return rows;
}
