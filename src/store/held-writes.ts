/**
 * State writes that a writer holds back for a moment, and the readers that must not miss them.
 *
 * An attempt whose latest frames only write state or output (no answer is owed to the SDK)
 * waits briefly for the frames that follow, usually its End, so both become one commit
 * (runtime/invoker/attempt.ts). Whoever reads that key's state meanwhile — a shared handler's
 * Start, a lazy state read, `/query` — first has the held writes committed, so a read never
 * misses state the SDK has sent: readers see it as if it had been committed on arrival.
 */
import { DelegatingStore } from './delegating.js';
import type { Store } from './types.js';

const at = (partition: number, service: string, key: string) => `${partition}\u0000${service}\u0000${key}`;

export class HeldWrites {
  /** Per key: commits what is held now, resolving once it is stored (or failed). */
  private readonly held = new Map<string, () => Promise<void>>();

  /**
   * `release` commits what its holder holds for the key; returns the function the holder
   * calls once it commits by itself. One holder per key: only the key's exclusive handler writes.
   */
  hold(partition: number, service: string, key: string, release: () => Promise<void>): () => void {
    const k = at(partition, service, key);
    this.held.set(k, release);
    return () => {
      if (this.held.get(k) === release) this.held.delete(k);
    };
  }

  /** Resolves once nothing is held for the key any more. */
  async settle(partition: number, service: string, key: string): Promise<void> {
    const release = this.held.get(at(partition, service, key));
    // A failed commit stored nothing; the reader then sees what is stored.
    if (release) await release().catch(() => undefined);
  }

  /** `store`, with state reads that settle the key's held writes first. */
  reading(store: Store): Store {
    return new SettledReads(store, this);
  }
}

class SettledReads extends DelegatingStore {
  constructor(
    inner: Store,
    private readonly writes: HeldWrites,
  ) {
    super(inner);
  }

  override readState: Store['readState'] = async (partition, service, key) => {
    await this.writes.settle(partition, service, key);
    return this.inner.readState(partition, service, key);
  };

  override readStateKey: Store['readStateKey'] = async (partition, service, key, stateKey) => {
    await this.writes.settle(partition, service, key);
    return this.inner.readStateKey(partition, service, key, stateKey);
  };
}
