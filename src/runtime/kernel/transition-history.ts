/**
 * The history entries one commit adds to an invocation (design.md, "Visualisation"): one per
 * event its machine took, so the UI can draw the path it went, not only where it is.
 *
 * Called once per commit with everything that commit stepped, and stored in that same commit,
 * so the history holds each committed transition exactly once: a commit that fails stores
 * none of its entries, and an event replayed after a restart was never stored before.
 */
import type { HistoryEntry } from '../../store/types.js';
import type { InvocationSnapshot } from './snapshots.js';

/** One machine event with the snapshot it led to; the initial step's event is `xstate.init`. */
export interface SteppedEvent {
  event: { type: string; now: number };
  snapshot: InvocationSnapshot;
}

/** `from` is the snapshot the steps started from; undefined for a new invocation. */
export function historyEntries(from: InvocationSnapshot | undefined, steps: SteppedEvent[]): HistoryEntry[] {
  const entries: HistoryEntry[] = [];
  let previous = from;
  for (const { event, snapshot } of steps) {
    // XState hands back the very same snapshot for an event no transition takes.
    if (snapshot !== previous) {
      entries.push({
        from: previous === undefined ? null : String(previous.value),
        event: event.type,
        to: String(snapshot.value),
        at: event.now,
        attempt: snapshot.context.retryCount,
      });
    }
    previous = snapshot;
  }
  return entries;
}
