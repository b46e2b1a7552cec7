/**
 * A write the store could not confirm, settled before anyone is answered (issue 31).
 *
 * When Redis goes away, a write either never left (`StoreUnavailable`, `mayHaveApplied:
 * false`) or its reply was lost (`mayHaveApplied: true`: it may have landed). Answering 503
 * then leaves the client guessing: retrying a plain call may run it twice, not retrying may
 * lose it. Instead, `confirmed` waits for the store to answer again, up to a bound, and then
 * knows: a write that never left is done now; one whose outcome was unknown is read back
 * (`landed`) and answered as if nothing had happened, or done now if it did not land. Only
 * past the bound does the caller get a 503, whose text says whether a retry is safe.
 */
import { StoreUnavailable, type Store } from './types.js';

export interface OutageWait {
  readonly store: Pick<Store, 'ping'>;
  /** How long (ms) one request may wait for the store to come back (`REDSTATE_STORE_OUTAGE_WAIT`). */
  readonly boundMs: number;
}

/** While the store is away, how often it is asked whether it answers again. */
const PROBE_EVERY_MS = 100;

/**
 * Runs `write` until the store confirms it. `landed` reads whether a write whose outcome was
 * unknown took effect, and answers what the write would have; without it, the write must be
 * one that may run twice with the same effect (a whole document or state set again, a read).
 */
export async function confirmed<T>(
  wait: OutageWait,
  write: () => Promise<T>,
  landed?: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + wait.boundMs;
  // An earlier try's outcome is unknown: read before writing again.
  let unknown = false;
  for (;;) {
    try {
      if (unknown && landed) {
        const found = await landed();
        if (found !== undefined) return found;
        unknown = false;
      }
      return await write();
    } catch (err) {
      // Fenced (a partition this node stopped holding while the store was away) wrote nothing
      // either: tried again once the store answers, by this node if it holds it again, else
      // by the write's own way to the owner.
      if (!(err instanceof StoreUnavailable)) throw err;
      unknown ||= err.mayHaveApplied;
      await storeAnswers(wait, deadline, !unknown ? 'notApplied' : landed ? 'unknown' : 'repeatable');
    }
  }
}

/** What a client may do after a 503: nothing was applied, or it may have been (and applying it again repeats it, or not). */
type RetryAdvice = 'notApplied' | 'unknown' | 'repeatable';

/** Resolves once the store answers; past the deadline, throws the 503 that says what a retry would do. */
async function storeAnswers(wait: OutageWait, deadline: number, advice: RetryAdvice): Promise<void> {
  for (;;) {
    // A pause first: a store that answers but refused (a partition's lease not taken back yet)
    // is not asked again at once.
    await new Promise((r) => setTimeout(r, Math.min(PROBE_EVERY_MS, Math.max(0, deadline - Date.now()))));
    if (Date.now() >= deadline) throw pastBound(wait.boundMs, advice);
    try {
      await wait.store.ping();
      return;
    } catch (err) {
      if (!(err instanceof StoreUnavailable)) throw err;
    }
  }
}

function pastBound(boundMs: number, advice: RetryAdvice): StoreUnavailable {
  const waited = `the store stayed unavailable for ${(boundMs / 1000).toFixed(1)} s`;
  const during = `The store became unavailable while this change was being stored, and ${waited}`;
  switch (advice) {
    case 'notApplied':
      return new StoreUnavailable(
        `The store is unavailable: ${waited} and this request was not applied. It is safe to retry.`,
        false,
      );
    case 'repeatable':
      return new StoreUnavailable(
        `${during}. It is safe to retry: applying this change twice has the same effect as once.`,
        true,
      );
    case 'unknown':
      return new StoreUnavailable(
        `${during}, so whether it was applied is not known yet. Retrying is safe with an idempotency key; without one it may apply the change twice.`,
        true,
      );
  }
}
