/**
 * Operator writes of a virtual object's (or workflow's) whole state: the admin API's
 * `POST /services/{name}/state` (reference-behavior.md §3.4).
 *
 * A mutation takes its key's lock like an exclusive invocation does, so it lands between two
 * exclusive invocations, never during one: it queues in the key's inbox (in the commit that
 * stores it), and when the lock comes to it the new state, the lock's release and the removal
 * of the pending mutation are one commit. The lock machine (machines/object-key.ts) sees
 * mutations as ids like any other; `isStateMutationId` tells the runtime which grants are
 * ours. A mutation whose `version` no longer matches the state it would replace is dropped
 * silently, as the reference does.
 */
import { createHash, randomUUID } from 'node:crypto';
import { partitionKeyOf } from '../protocol/ids.js';
import type { StateOp } from '../store/types.js';
import { partitionOf } from './partitioning.js';
import type { Runtime } from './runtime.js';

/** Record kind of mutations waiting for their key's lock. */
export const STATE_MUTATION_RECORD = 'stateMutation';

const PREFIX = 'statemut_';

interface PendingMutation {
  service: string;
  key: string;
  version?: string;
  /** Entries of the new state; values base64, so the record stays JSON. */
  state: Array<[string, string]>;
}

export interface StateMutation {
  service: string;
  key: string;
  /** `stateVersion` of the state this mutation expects to replace; absent = replace whatever is there. */
  version?: string;
  state: Map<string, Uint8Array>;
}

export function isStateMutationId(id: string): boolean {
  return id.startsWith(PREFIX);
}

/** The partition travels in the id: a grant names only the id. */
function partitionOfMutation(id: string): number {
  return Number(id.slice(PREFIX.length).split('_')[0]);
}

/**
 * The version of a state (§3.4), as the reference and the CLI compute it: SHA-256 over the
 * entries sorted by key, each hashed as `u64 BE index ‖ 0x01 ‖ key ‖ 0x02 ‖ value ‖ 0x03`,
 * base64url without padding.
 */
export function stateVersion(state: Map<string, Uint8Array>): string {
  const hash = createHash('sha256');
  const entries = [...state].map(([k, v]) => [Buffer.from(k, 'utf8'), v] as const).sort(([a], [b]) => Buffer.compare(a, b));
  entries.forEach(([key, value], i) => {
    const index = Buffer.alloc(8);
    index.writeBigUInt64BE(BigInt(i));
    hash.update(index).update(Buffer.of(1)).update(key).update(Buffer.of(2)).update(value).update(Buffer.of(3));
  });
  return hash.digest('base64url');
}

/**
 * Stores the mutation in its key's inbox; resolves once that is durable (the admin's 202).
 * It is applied at once if the key is free, else when the lock comes to it.
 */
export async function submitStateMutation(rt: Runtime, m: StateMutation): Promise<void> {
  const partition = partitionOf(partitionKeyOf(m.key), rt.config.partitions);
  const id = `${PREFIX}${partition}_${randomUUID()}`;
  const pending: PendingMutation = {
    service: m.service,
    key: m.key,
    ...(m.version !== undefined ? { version: m.version } : {}),
    state: [...m.state].map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  };
  const actor = await rt.locks.get(partition, m.service, m.key);
  const granted = await actor.run(async () => {
    const change = await actor.change({ type: 'acquire', invocationId: id }, (c) =>
      rt.store.commit({ partition, records: [c.record, { kind: STATE_MUTATION_RECORD, key: id, value: pending }] }),
    );
    return change.granted.includes(id);
  });
  if (!granted) return;
  // A free key: applied before answering. It is stored already, so a failure here is retried.
  await applyStateMutation(rt, id).catch((err: unknown) => {
    rt.log.error(`state mutation ${id}: ${String(err)}; retrying`);
    setTimeout(() => grantToStateMutation(rt, id), 1000).unref();
  });
}

/** The lock came to mutation `id`: write the state and pass the lock on, in one commit. */
export async function applyStateMutation(rt: Runtime, id: string): Promise<void> {
  const partition = partitionOfMutation(id);
  const pending = (await rt.store.getRecord(partition, STATE_MUTATION_RECORD, id)) as PendingMutation | undefined;
  if (!pending) return; // applied already
  const actor = await rt.locks.get(partition, pending.service, pending.key);
  const granted = await actor.run(async () => {
    if (actor.holder !== id) return [];
    let ops: StateOp[] = [];
    if (pending.version === undefined || stateVersion(await rt.store.readState(partition, pending.service, pending.key)) === pending.version) {
      ops = [{ op: 'clearAll' }, ...pending.state.map(([key, value]): StateOp => ({ op: 'set', key, value: Buffer.from(value, 'base64') }))];
    }
    const change = await actor.change({ type: 'release', invocationId: id }, (c) =>
      rt.store.commit({
        partition,
        ...(ops.length > 0 ? { state: [{ service: pending.service, key: pending.key, ops }] } : {}),
        records: [c.record, { kind: STATE_MUTATION_RECORD, key: id, value: null }],
      }),
    );
    return change.granted;
  });
  for (const next of granted) rt.grantLock(next);
}

/** The lock came to a mutation: apply it in the background (a failure is retried). */
export function grantToStateMutation(rt: Runtime, id: string): void {
  applyStateMutation(rt, id).catch((err: unknown) => {
    rt.log.error(`state mutation ${id}: ${String(err)}; retrying`);
    setTimeout(() => grantToStateMutation(rt, id), 1000).unref();
  });
}

/**
 * At start-up: mutations still waiting. One that holds its key's lock (granted just before the
 * last process stopped) is applied now; the others wait in the key's inbox as before.
 */
export async function recoverStateMutations(rt: Runtime): Promise<number> {
  let found = 0;
  for (let p = 0; p < rt.config.partitions; p++) {
    for (const id of await rt.store.listRecords(p, STATE_MUTATION_RECORD)) {
      const pending = (await rt.store.getRecord(p, STATE_MUTATION_RECORD, id)) as PendingMutation | undefined;
      if (!pending) continue;
      found++;
      const actor = await rt.locks.get(p, pending.service, pending.key);
      if (actor.holder === id) grantToStateMutation(rt, id);
    }
  }
  return found;
}
