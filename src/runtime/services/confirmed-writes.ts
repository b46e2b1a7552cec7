/**
 * The runtime's writes for the ingress and the admin API, answered with certainty after a
 * store outage: `store/confirmed.ts` waits for the store and tries again; this file says, for
 * each write, how a try again finds out whether an earlier try whose outcome was unknown
 * landed. It is called from the runtime's face (runtime.ts) only, so every route gets the
 * same answer: call, send, delayed, scoped, idempotent or not, state mutations, cancel, kill,
 * pause, resume, purge, purge of a journal and restart-as-new.
 *
 * The failed commit itself is handled where it happened (the actor is dropped and its
 * partition recovered from the store, services/partitions.ts); what is decided here is only
 * what the waiting client is told.
 */
import { confirmed, type OutageWait } from '../../store/confirmed.js';
import { StoreUnavailable, type Store } from '../../store/types.js';
import type { ActorCache } from './actors.js';
import { againAfterLoss, type Admission } from './admission.js';
import { operatorLanded, type Outcome } from './operator.js';

export interface ConfirmedWritesDeps {
  readonly wait: OutageWait;
  readonly store: Store;
  readonly actors: ActorCache;
}

export class ConfirmedWrites {
  constructor(private readonly deps: ConfirmedWritesDeps) {}

  /**
   * Creates the admitted invocation (and, for a call, waits for it): tried again after an
   * outage with the same id, created only if absent, and answered as created when an earlier
   * try may have made it (admission.ts `againAfterLoss`). Past the bound, the 503 names the id.
   */
  async create<T>(a: Admission, run: (a: Admission) => Promise<T>): Promise<T> {
    let tries = 0;
    let mayHaveCreated = false;
    const tryOnce = async () => {
      try {
        return await run(tries++ === 0 ? a : againAfterLoss(a, mayHaveCreated));
      } catch (err) {
        if (err instanceof StoreUnavailable && err.mayHaveApplied) mayHaveCreated = true;
        throw err;
      }
    };
    // A try again is itself the read back: it finds the invocation, or creates it.
    return confirmed(this.deps.wait, tryOnce).catch((err: unknown) => {
      if (!(err instanceof StoreUnavailable) || !mayHaveCreated) throw err;
      const waited = (this.deps.wait.boundMs / 1000).toFixed(1);
      throw new StoreUnavailable(
        `The store became unavailable while this invocation was being created and stayed unavailable for ${waited} s, so whether it was created is not known yet. ` +
          `Its id is ${a.id}: attach to it (/restate/attach/${a.id}) once the store is back; sending the request again without an idempotency key may run it twice.`,
        true,
      );
    });
  }

  /** A cancel, kill, pause or purge: it landed if the invocation shows it (operator.ts `operatorLanded`). */
  operator(id: string, action: 'cancel' | 'kill' | 'pause' | 'purge', run: () => Promise<Outcome>): Promise<Outcome> {
    return confirmed(this.deps.wait, run, () => operatorLanded(this.deps, id, action));
  }

  /** A write whose second application changes nothing more (a key's whole state replaced), or a read. */
  repeatable<T>(run: () => Promise<T>): Promise<T> {
    return confirmed(this.deps.wait, run);
  }
}
