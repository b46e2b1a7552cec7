/**
 * Does the journal already hold what a suspended invocation waits for?
 *
 * v5/v6 Suspension lists flat sets and means "resume when ANY of them is there"; v7 carries a
 * future tree that must be able to resolve (service-protocol.md §11). The same check is the
 * race check done before suspending, and the test run for every new notification while
 * suspended.
 */
import type { Awaiting } from '../../../machines/invocation.js';
import { CombinatorType, type Future } from '../../protocol/messages.js';
import type { JournalView, Resolution } from './journal.js';

function resolveFuture(f: Future, journal: JournalView): Resolution | undefined {
  const outcomes: Array<Resolution | undefined> = [
    ...f.waitingCompletions.map((id) => journal.completions.get(id)),
    ...f.waitingSignals.map((id) => journal.signals.get(id)),
    ...f.waitingNamedSignals.map((name) => journal.namedSignals.get(name)),
    ...f.nestedFutures.map((n) => resolveFuture(n, journal)),
  ];
  if (outcomes.length === 0) return 'success';
  const done = outcomes.filter((o): o is Resolution => o !== undefined);
  const anySuccess = done.includes('success');
  const anyFailure = done.includes('failure');
  const all = done.length === outcomes.length;
  switch (f.combinatorType) {
    case CombinatorType.AllCompleted:
      return all ? (anyFailure ? 'failure' : 'success') : undefined;
    case CombinatorType.FirstSucceededOrAllFailed:
      return anySuccess ? 'success' : all ? 'failure' : undefined;
    case CombinatorType.AllSucceededOrFirstFailed:
      return anyFailure ? 'failure' : all ? 'success' : undefined;
    default:
      // FIRST_COMPLETED, and UNKNOWN which the protocol says to treat the same way.
      return done.length > 0 ? (anySuccess ? 'success' : 'failure') : undefined;
  }
}

export function isSatisfied(awaiting: Awaiting, journal: JournalView): boolean {
  if (awaiting.future !== undefined) return resolveFuture(awaiting.future as Future, journal) !== undefined;
  return (
    awaiting.completions.some((id) => journal.completions.has(id)) ||
    awaiting.signals.some((id) => journal.signals.has(id)) ||
    awaiting.namedSignals.some((name) => journal.namedSignals.has(name))
  );
}
