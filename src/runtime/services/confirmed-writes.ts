/**
 * The runtime's writes for the ingress and the admin API, answered with certainty after a
 * store outage (issue 31): `store/confirmed.ts` waits for the store and tries again; this file
 * says, for each write, how to read back whether a try whose outcome was unknown landed. It
 * is called from the runtime's face (runtime.ts) only, so every route gets the same answer:
 * call, send, delayed, scoped, idempotent or not, state mutations, cancel and kill.
 *
 * The invoking commit's own failure is handled where it happens (the actor is dropped and its
 * partition recovered from the store, runtime.ts `lost`); what is decided here is only what
 * the waiting client is told.
 */
import { confirmed, type OutageWait } from '../../store/confirmed.js';
import type { Store } from '../../store/types.js';
import type { InvokeResult } from '../types.js';
import type { ActorCache } from './actors.js';
import { operatorLanded, type Outcome } from './operator.js';

export interface ConfirmedWritesDeps {
  readonly wait: OutageWait;
  readonly store: Store;
  readonly actors: ActorCache;
}

export class ConfirmedWrites {
  constructor(private readonly deps: ConfirmedWritesDeps) {}

  /**
   * Creates the invocation `id` (chosen before the first try, so every try creates the same
   * one), asked to start at `executeAt`. It landed if the store has it: the client gets its id
   * as if nothing had happened.
   */
  invoke(id: string, executeAt: number | undefined, create: () => Promise<InvokeResult>): Promise<InvokeResult> {
    return confirmed(this.deps.wait, create, async () => {
      const stored = await this.deps.actors.stored(id);
      if (!stored) return undefined;
      const startAt = stored.context.scheduledStartAt ?? executeAt;
      return { invocationId: id, previous: false, ...(startAt !== undefined ? { executeAt: startAt } : {}) };
    });
  }

  /** A cancel or kill: it landed if the invocation shows it (operator.ts `operatorLanded`). */
  operator(id: string, action: 'cancel' | 'kill', run: () => Promise<Outcome>): Promise<Outcome> {
    return confirmed(this.deps.wait, run, () => operatorLanded(this.deps, id, action));
  }

  /** A write whose second application changes nothing more (a key's whole state replaced), or a read. */
  repeatable<T>(run: () => Promise<T>): Promise<T> {
    return confirmed(this.deps.wait, run);
  }
}
