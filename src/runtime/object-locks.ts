/**
 * The `object-key` actors (machines/object-key.ts): one per virtual-object key or workflow id,
 * persisted as a record of the key's partition (kind `object`).
 *
 * Every change to a key's lock runs on the actor's queue and is committed *together with* the
 * invocation change that caused it (creation, completion), so the lock and the invocations
 * can never disagree in the store. Invocation jobs may wait for a key's queue; key jobs never
 * wait for an invocation's queue, so the two cannot deadlock.
 */
import type { SnapshotFrom } from 'xstate';
import { objectKeyMachine, objectKeySteps, type ObjectKeyContext, type ObjectKeyEvent } from '../../machines/object-key.js';
import type { RecordWrite, Store } from '../store/types.js';
import { SerialQueue } from './serial-queue.js';
import { SingleFlight } from './single-flight.js';

type ObjectKeySnapshot = SnapshotFrom<typeof objectKeyMachine>;

interface PersistedObjectKey {
  value: string;
  context: ObjectKeyContext;
}

export const OBJECT_RECORD = 'object';

export function objectRecordKey(service: string, key: string): string {
  return JSON.stringify([service, key]);
}

export interface LockChange {
  record: RecordWrite;
  /** Invocations that got the lock by this change. */
  granted: string[];
}

export class ObjectKeyActor {
  private readonly queue = new SerialQueue();

  constructor(
    readonly service: string,
    readonly key: string,
    private snapshot: ObjectKeySnapshot,
  ) {}

  get holder(): string | undefined {
    return this.snapshot.context.holder;
  }

  /** Runs `job` after every earlier job of this key. */
  run<T>(job: () => Promise<T>): Promise<T> {
    return this.queue.run(job);
  }

  /**
   * Computes a lock change; `commit` must store `change.record` with the caller's own writes.
   * The in-memory state moves only once that commit succeeded. Call inside `run`.
   */
  async change(event: ObjectKeyEvent, commit: (change: LockChange) => Promise<void>): Promise<LockChange> {
    const [next, actions] = objectKeySteps.next(this.snapshot, event);
    const granted = actions.filter((a) => a.type === 'grant').map((a) => (a.params as { invocationId: string }).invocationId);
    const persisted: PersistedObjectKey = { value: String(next.value), context: next.context };
    const change: LockChange = {
      record: { kind: OBJECT_RECORD, key: objectRecordKey(this.service, this.key), value: persisted },
      granted,
    };
    await commit(change);
    this.snapshot = next;
    return change;
  }
}

export class ObjectLocks {
  private readonly actors = new Map<string, ObjectKeyActor>();
  private readonly loading = new SingleFlight<ObjectKeyActor>();

  constructor(private readonly store: Store) {}

  async get(partition: number, service: string, key: string): Promise<ObjectKeyActor> {
    const id = objectRecordKey(service, key);
    const live = this.actors.get(id);
    if (live) return live;
    return this.loading.run(id, async () => {
      const persisted = (await this.store.getRecord(partition, OBJECT_RECORD, id)) as PersistedObjectKey | undefined;
      const snapshot = persisted
        ? objectKeyMachine.resolveState({ value: persisted.value, context: persisted.context })
        : objectKeySteps.initial({ service, key })[0];
      const actor = new ObjectKeyActor(service, key, snapshot);
      this.actors.set(id, actor);
      return actor;
    });
  }
}
