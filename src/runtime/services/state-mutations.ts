/**
 * Operator writes of a virtual object's (or workflow's) whole state: the admin API's
 * `POST /services/{name}/state` (reference-behavior.md §3.4).
 *
 * A mutation takes its key's lock like an exclusive invocation does, so it lands between two
 * exclusive invocations, never during one: it queues in the key's inbox (in the commit that
 * stores it), and when the lock comes to it the new state, the lock's release and the removal
 * of the pending mutation are one commit. The lock machine (machines/object-key.ts) sees
 * mutations as ids like any other; `StateMutations.owns` tells the runtime which grants are
 * ours. A mutation whose `version` no longer matches the state it would replace is dropped
 * silently, as the reference does.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { StateOp, Store, Timer } from '../../store/types.js';
import type { StateExpiries } from './state-expiry.js';
import type { ObjectLocks } from '../kernel/object-keys.js';
import { partitionOfTarget } from '../../model/partitioning.js';
import { RecordKind } from '../../model/persisted.js';
import { storedService } from '../../model/state-owner.js';
import type { RetryScheduler } from './retry.js';

const PREFIX = 'statemut_';

interface PendingMutation {
  service: string;
  key: string;
  /** A scoped key's state (scoped virtual objects). */
  scope?: string;
  version?: string;
  /** Entries of the new state; values base64, so the record stays JSON. */
  state: Array<[string, string]>;
}

export interface StateMutation {
  service: string;
  key: string;
  scope?: string;
  /** `stateVersion` of the state this mutation expects to replace; absent = replace whatever is there. */
  version?: string;
  state: Map<string, Uint8Array>;
}

export interface StateMutationsDeps {
  readonly store: Store;
  readonly locks: ObjectLocks;
  readonly partitions: number;
  readonly retry: RetryScheduler;
  /** The lock passed on to these ids (invocations or other mutations). */
  granted(ids: string[]): void;
  /** A write restarts the key's state expiry clock (state_ttl). */
  readonly expiries: Pick<StateExpiries, 'writesFor'>;
  armed(partition: number, timers: Timer[]): void;
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
  const entries = [...state]
    .map(([k, v]) => [Buffer.from(k, 'utf8'), v] as const)
    .sort(([a], [b]) => Buffer.compare(a, b));
  entries.forEach(([key, value], i) => {
    const index = Buffer.alloc(8);
    index.writeBigUInt64BE(BigInt(i));
    hash.update(index).update(Buffer.of(1)).update(key).update(Buffer.of(2)).update(value).update(Buffer.of(3));
  });
  return hash.digest('base64url');
}

export class StateMutations {
  constructor(private readonly deps: StateMutationsDeps) {}

  /** Lock holders that are mutations, not invocations. */
  owns(id: string): boolean {
    return id.startsWith(PREFIX);
  }

  /**
   * Stores the mutation in its key's inbox; resolves once that is durable (the admin's 202).
   * It is applied at once if the key is free, else when the lock comes to it.
   */
  async submit(m: StateMutation): Promise<void> {
    const { store, locks, partitions } = this.deps;
    const partition = partitionOfTarget(m, partitions);
    const id = `${PREFIX}${partition}_${randomUUID()}`;
    const pending: PendingMutation = {
      service: m.service,
      key: m.key,
      ...(m.scope !== undefined ? { scope: m.scope } : {}),
      ...(m.version !== undefined ? { version: m.version } : {}),
      state: [...m.state].map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    };
    const granted = await locks.with(
      partition,
      m.service,
      m.key,
      async (lock) => {
        const change = await lock.change({ type: 'acquire', invocationId: id }, (c) =>
          store.commit({ partition, records: [c.record, { kind: RecordKind.stateMutation, key: id, value: pending }] }),
        );
        return change.granted.includes(id);
      },
      m.scope,
    );
    // A free key: applied before answering. It is stored already, so a failure here is retried.
    if (granted) await this.apply(id).catch((err: unknown) => this.retryLater(id, err));
  }

  /** The lock came to a mutation: apply it in the background (a failure is retried). */
  granted(id: string): void {
    this.apply(id).catch((err: unknown) => this.retryLater(id, err));
  }

  /**
   * Recovery: mutations still waiting in these partitions. One that holds its key's lock
   * (granted just before the last process stopped, or by a commit whose reply was lost) is
   * applied now; the others wait in the key's inbox as before.
   */
  async recover(partitions: number[]): Promise<number> {
    let found = 0;
    for (const p of partitions) {
      for (const id of await this.deps.store.listRecords(p, RecordKind.stateMutation)) {
        const pending = (await this.deps.store.getRecord(p, RecordKind.stateMutation, id)) as
          PendingMutation | undefined;
        if (!pending) continue;
        found++;
        const lock = await this.deps.locks.get(p, pending.service, pending.key, pending.scope);
        if (lock.holder === id) this.granted(id);
      }
    }
    return found;
  }

  private retryLater(id: string, err: unknown): void {
    this.deps.retry.later(`state mutation ${id}`, err, () => this.apply(id), partitionOfMutation(id));
  }

  /** The lock came to mutation `id`: write the state and pass the lock on, in one commit. */
  private async apply(id: string): Promise<void> {
    const { store, locks } = this.deps;
    const partition = partitionOfMutation(id);
    const pending = (await store.getRecord(partition, RecordKind.stateMutation, id)) as PendingMutation | undefined;
    if (!pending) return; // applied already
    const owner = storedService(pending);
    const granted = await locks.with(
      partition,
      pending.service,
      pending.key,
      async (lock) => {
        if (lock.holder !== id) return [];
        let ops: StateOp[] = [];
        if (
          pending.version === undefined ||
          stateVersion(await store.readState(partition, owner, pending.key)) === pending.version
        ) {
          ops = [
            { op: 'clearAll' },
            ...pending.state.map(([key, value]): StateOp => ({ op: 'set', key, value: Buffer.from(value, 'base64') })),
          ];
        }
        const expiry =
          ops.length > 0 ? this.deps.expiries.writesFor(pending.service, pending.key, pending.scope) : undefined;
        const change = await lock.change({ type: 'release', invocationId: id }, (c) =>
          store.commit({
            partition,
            ...(ops.length > 0 ? { state: [{ service: owner, key: pending.key, ops }] } : {}),
            records: [
              c.record,
              { kind: RecordKind.stateMutation, key: id, value: null },
              ...(expiry ? [expiry.record] : []),
            ],
            ...(expiry ? { timersAdd: [expiry.timer] } : {}),
          }),
        );
        if (expiry) this.deps.armed(partition, [expiry.timer]);
        return change.granted;
      },
      pending.scope,
    );
    this.deps.granted(granted);
  }
}
