/**
 * Redis key layout. Every key of partition N carries the hash tag `{pN}`, so one partition lives
 * in one Redis Cluster slot and one Lua script may touch all of it (design.md, "Scaling past
 * one machine"; Redis hashes only the text inside the first `{…}`).
 *
 *   rs:{pN}:invocations          set     every invocation id of the partition
 *   rs:{pN}:active               set     non-terminal invocation ids
 *   rs:{pN}:inv:<id>             string  JSON snapshot of one invocation
 *   rs:{pN}:journal:<id>         list    journal entries (2-byte BE type + payload)
 *   rs:{pN}:history:<id>         list    history entries (JSON), the last HISTORY_LIMIT
 *   rs:{pN}:state:<json>         hash    state of one object/workflow key; <json> = JSON [service, key]
 *   rs:{pN}:timers               zset    timer key scored by dueAt (epoch ms)
 *   rs:{pN}:outbox               hash    message id -> JSON body
 *   rs:{pN}:rec:<kind>           hash    record key -> JSON value
 *   rs:{pN}:lease                string  id of the node holding the partition (expires)
 *   rs:{pN}:epoch                string  the partition's fencing epoch (lua/lease.lua)
 *   rs:{global}:registry         string  JSON registry document: deployments, services, rules,
 *                                        subscriptions, Kafka clusters (global)
 *   rs:{global}:partitions       string  the partition count the store was created with
 *   rs:{nodes}:live, :info       zset, hash  the node registry (lua/nodes.lua)
 *
 * Records that belong to no partition carry the one tag `{global}` (the node registry its own,
 * `{nodes}`), so on a Redis Cluster each group shares one slot and a script may touch several
 * of them.
 *
 * Each variable part is the last segment after a fixed, distinct prefix, so ids containing
 * `:` or `/` cannot collide; the (service, key) pair is JSON-encoded because it has two
 * variable parts.
 */
import { checkPartition } from '../codec.js';

export const registryKey = 'rs:{global}:registry';
/** Where stores made before the global tag keep the registry: read while `registryKey` is absent. */
export const legacyRegistryKey = 'rs:registry';
export const partitionCountKey = 'rs:{global}:partitions';
export const nodeKeys = { live: 'rs:{nodes}:live', info: 'rs:{nodes}:info' } as const;

export interface PartitionKeys {
  invocations: string;
  active: string;
  timers: string;
  outbox: string;
  lease: string;
  epoch: string;
  snapshot(id: string): string;
  journal(id: string): string;
  history(id: string): string;
  state(service: string, key: string): string;
  records(kind: string): string;
}

export function partitionKeys(partition: number): PartitionKeys {
  checkPartition(partition);
  const p = `rs:{p${partition}}:`;
  return {
    invocations: `${p}invocations`,
    active: `${p}active`,
    timers: `${p}timers`,
    outbox: `${p}outbox`,
    lease: `${p}lease`,
    epoch: `${p}epoch`,
    snapshot: (id) => `${p}inv:${id}`,
    journal: (id) => `${p}journal:${id}`,
    history: (id) => `${p}history:${id}`,
    state: (service, key) => `${p}state:${JSON.stringify([service, key])}`,
    records: (kind) => `${p}rec:${kind}`,
  };
}
