/**
 * State that expires (`state_ttl`, issue 26): a key whose state was not written for its TTL
 * has all its state cleared, once, and only while no invocation (or admin state write) holds
 * or waits for the key's lock.
 *
 * Every commit that writes such a key's state restarts its clock in the same transition
 * (model/state-expiry.ts: the expiry record and its timer). When the timer fires, the expiry
 * runs in the key's lock queue: a record that says later (written meanwhile) leaves it alone;
 * a busy lock puts it off until the lock is free (`freed`), and at the latest a while later (a
 * restart forgets who waited); a free one clears the state, removes the record (compare-and-set:
 * a write that landed first wins) and the timer in one commit. A crash before that commit
 * leaves the timer, which fires again; after it, nothing is left to fire.
 */
import type { ObjectLocks } from '../kernel/object-keys.js';
import type { Registry } from '../../registry/registry.js';
import type { ServiceMeta } from '../../registry/types.js';
import type { Store, Timer } from '../../store/types.js';
import { objectRecordKey, parseObjectRecordKey, RecordKind } from '../../model/persisted.js';
import { readStateExpiry, stateExpiryWrites } from '../../model/state-expiry.js';
import { storedService } from '../../model/state-owner.js';
import { timerOf } from '../../model/timers.js';

/** While its lock is busy, an overdue expiry is tried again when the lock is freed, and at the latest this long after. */
const BUSY_RECHECK_MS = 60_000;

export interface StateExpiryDeps {
  readonly store: Store;
  readonly locks: ObjectLocks;
  readonly registry: Registry;
  /** Arms timers this service committed. */
  armed(partition: number, timers: Timer[]): void;
  now(): number;
  log(err: unknown): void;
}

/** Whether any state of the service expires: its own TTL, or a handler's. */
function expires(s: ServiceMeta): boolean {
  return (s.stateTtl ?? 0) > 0 || s.handlers.some((h) => (h.stateTtl ?? 0) > 0);
}

export class StateExpiries {
  /** Overdue expiries whose lock was busy, by the key's lock record key → its partition. */
  private readonly overdue = new Map<string, number>();

  constructor(private readonly deps: StateExpiryDeps) {}

  /** The writes that restart a key's clock when an admin state write replaces its state under the service's TTL; none without one. */
  writesFor(service: string, key: string, scope: string | undefined) {
    const ttl = this.deps.registry.getService(service)?.stateTtl;
    return ttl !== undefined && ttl > 0 ? stateExpiryWrites(service, key, scope, ttl, this.deps.now()) : undefined;
  }

  /** A key's lock became free: an expiry that waited for it runs now. */
  freed(partition: number, service: string, key: string, scope: string | undefined): void {
    const lock = objectRecordKey(service, key, scope);
    if (!this.overdue.has(lock)) return;
    this.fire(partition, lock).catch((err: unknown) => this.deps.log(err));
  }

  /** The partition moved to another node, whose timers take over. */
  forgetPartition(partition: number): void {
    for (const [lock, p] of [...this.overdue]) if (p === partition) this.overdue.delete(lock);
  }

  /** The key's expiry timer fired (or its lock was freed while it was overdue). */
  async fire(partition: number, lock: string): Promise<void> {
    const { store, locks, now } = this.deps;
    const timer = timerOf.stateExpiry(lock);
    const named = parseObjectRecordKey(lock);
    if (!named) {
      await store.commit({ partition, timersRemove: [timer] });
      return;
    }
    const { service, key, scope } = named;
    await locks.with(
      partition,
      service,
      key,
      async (held) => {
        const raw = await store.getRecord(partition, RecordKind.stateExpiry, lock);
        const expiry = readStateExpiry(raw);
        if (!expiry) {
          this.overdue.delete(lock);
          await store.commit({ partition, timersRemove: [timer] });
          return;
        }
        // Written since: the write moved the timer too.
        if (expiry.dueAt > now()) return;
        const meta = this.deps.registry.getService(service);
        if (meta && !expires(meta)) {
          // Turned off since: the key keeps its state.
          this.overdue.delete(lock);
          await store.commit({
            partition,
            records: [{ kind: RecordKind.stateExpiry, key: lock, value: null, expect: raw }],
            timersRemove: [timer],
          });
          return;
        }
        if (!held.isFree) {
          this.overdue.set(lock, partition);
          const later = { ...timer, dueAt: now() + Math.min(expiry.ttl, BUSY_RECHECK_MS) };
          await store.commit({ partition, timersAdd: [later] });
          this.deps.armed(partition, [later]);
          return;
        }
        this.overdue.delete(lock);
        await store.commit({
          partition,
          state: [
            {
              service: storedService({ service, ...(scope !== undefined ? { scope } : {}) }),
              key,
              ops: [{ op: 'clearAll' }],
            },
          ],
          records: [{ kind: RecordKind.stateExpiry, key: lock, value: null, expect: raw }],
          timersRemove: [timer],
        });
      },
      scope,
    );
  }
}
