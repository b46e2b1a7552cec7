/**
 * What each effect of an invocation's step becomes in the store: the one place where the
 * machine's effects (machines/invocation.ts `InvocationEffect`) turn into writes of the step's
 * commit (design.md, "The invariant"). What each does once the commit is durable is
 * services/after-commit.ts's. Each effect, in both halves:
 *
 * | effect | in the commit | after it |
 * |---|---|---|
 * | `startAttempt` | — (the actor opens the attempt's stream while the commit is stored) | the attempt writes Start (kernel/invocation-actor.ts `settle`) |
 * | `armTimer` | a durable timer, owned by the invocation (here) | armed in memory (services/timer-arming.ts) |
 * | `requestLock`, `requestSlot` | — | queued for the key's lock / the scope's slot |
 * | `releaseLock` | the key's lock record and the scope's slot records (kernel/invocation-actor.ts `persist`) | whoever got them starts |
 * | `respond` | the result as an outbox message to a calling invocation (here) | waiting calls and attaches answered |
 *
 * The snapshot and the journal entries go with them, all in one `Transition`.
 */
import type { Completion, InvocationEffect } from '../../../machines/invocation.js';
import type { JournalEntry, OutboxMessage, Timer, Transition } from '../../store/types.js';
import type { Caller, OutboxBody } from '../../model/outbox.js';
import { persistInvocation, type InvocationSnapshot } from './snapshots.js';
import { timerOf } from '../../model/timers.js';

/** Writes a caller adds to a step: state, promises, timers of commands, outbox messages... */
export type ExtraWrites = Omit<Transition, 'partition' | 'invocations' | 'journal'>;

export interface StepWrites {
  id: string;
  partition: number;
  snapshot: InvocationSnapshot;
  /** Whether the snapshot differs from the stored one. */
  snapshotChanged: boolean;
  effects: InvocationEffect[];
  /** Entries to append, and the journal length they expect to find. */
  entries: JournalEntry[];
  journalAt: number;
  extra?: ExtraWrites;
  /**
   * The invocation is forgotten in this commit instead of stored: it never started (scheduled,
   * or queued for its key) and was cancelled or killed, which Restate answers by freeing it
   * (attach and output then find nothing). Its caller is still answered.
   */
  forget?: boolean;
}

export function transitionOf(w: StepWrites): Transition {
  const timersAdd: Timer[] = [...(w.extra?.timersAdd ?? [])];
  const outboxAdd: OutboxMessage[] = [...(w.extra?.outboxAdd ?? [])];
  const { caller, completion } = w.snapshot.context;
  for (const e of w.effects) {
    if (e.type === 'armTimer' && !w.forget) timersAdd.push({ ...timerOf[e.params.kind](w.id), dueAt: e.params.dueAt });
    else if (e.type === 'respond' && caller && completion)
      outboxAdd.push({ id: `${w.id}:result`, body: resultMessage(caller, completion) });
  }
  if (w.forget) {
    return {
      ...w.extra,
      partition: w.partition,
      deleteInvocations: [w.id],
      timersRemove: [...(w.extra?.timersRemove ?? []), timerOf.start(w.id), timerOf.retry(w.id)],
      timersAdd,
      outboxAdd,
    };
  }
  return {
    ...w.extra,
    partition: w.partition,
    ...(w.snapshotChanged
      ? { invocations: [{ id: w.id, snapshot: persistInvocation(w.snapshot), active: w.snapshot.status !== 'done' }] }
      : {}),
    ...(w.entries.length > 0 ? { journal: [{ id: w.id, at: w.journalAt, entries: w.entries }] } : {}),
    timersAdd,
    outboxAdd,
  };
}

function resultMessage(caller: Caller, completion: Completion): OutboxBody {
  return 'ok' in completion
    ? { kind: 'complete', invocationId: caller.invocationId, completionId: caller.completionId, value: completion.ok }
    : {
        kind: 'complete',
        invocationId: caller.invocationId,
        completionId: caller.completionId,
        failure: completion.failure,
      };
}
