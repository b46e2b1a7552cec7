/**
 * The history entries one commit adds to an invocation (design.md, "Visualisation"): one per
 * event its machine took, so the UI can draw the path it went, not only where it is.
 *
 * Called once per commit with everything that commit stepped, and stored in that same commit,
 * so the history holds each committed transition exactly once: a commit that fails stores
 * none of its entries, and an event replayed after a restart was never stored before.
 */
import type { AttemptFailure } from '../../../machines/invocation.js';
import type { HistoryEntry, HistoryFailure } from '../../store/types.js';
import type { InvocationSnapshot } from './snapshots.js';

/** One machine event with the snapshot it led to; the initial step's event is `xstate.init`. */
export interface SteppedEvent {
  event: { type: string; now: number; failure?: AttemptFailure | undefined };
  snapshot: InvocationSnapshot;
}

/**
 * A stack trace past this is cut: the history keeps its last 200 entries, and an invocation
 * that retries forever fills them with failures, each stored with every later commit's read.
 */
const MAX_STACKTRACE = 4096;

function failureOf(f: AttemptFailure): HistoryFailure {
  return {
    code: f.code,
    message: f.message,
    ...(f.stacktrace
      ? {
          stacktrace:
            f.stacktrace.length > MAX_STACKTRACE ? `${f.stacktrace.slice(0, MAX_STACKTRACE)}\n…` : f.stacktrace,
        }
      : {}),
    ...(f.relatedCommandIndex !== undefined ? { relatedCommandIndex: f.relatedCommandIndex } : {}),
    ...(f.relatedCommandName ? { relatedCommandName: f.relatedCommandName } : {}),
    ...(f.errorCode ? { errorCode: f.errorCode } : {}),
  };
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
        ...(event.type === 'attemptFailed' && event.failure ? { failure: failureOf(event.failure) } : {}),
      });
    }
    previous = snapshot;
  }
  return entries;
}
