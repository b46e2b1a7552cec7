/**
 * What a command handler sees and what it answers (service-protocol.md §9, §16b step 4).
 *
 * A command is appended to the journal verbatim; its handler says what else goes into the same
 * commit: the notifications the server answers with at once (invocation ids of calls, lazy state
 * reads), timers, outbox messages and state writes. Handlers do no I/O beyond reads: the
 * attempt commits, then performs.
 */
import type { Completion, Target } from '../../../../machines/invocation.js';
import type { Registry } from '../../../registry/registry.js';
import type { JournalEntry, OutboxMessage, StateOp, Store, Timer } from '../../../store/types.js';
import type { PromiseChanges } from './promise-records.js';

/** A command the server cannot accept: the attempt fails and is retried (Restate's precondition errors). */
export class CommandRejected extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'CommandRejected';
  }
}

/** An invocation's committed outcome, as attach and get-output see it. */
export type TargetOutcome =
  { state: 'completed'; completion: Completion } | { state: 'pending' } | { state: 'missing' };

export interface CommandScope {
  invocationId: string;
  partition: number;
  target: Target;
  handlerTy: 'Exclusive' | 'Shared' | 'Workflow' | undefined;
  store: Store;
  registry: Registry;
  now: number;
  /** State writes of earlier commands of the same batch: not in the store before its commit. */
  pendingState: readonly StateOp[];
  /** A new outbox message id of this batch, unique and stable. */
  nextMessageId(): string;
  /** Set when the batch holds promise commands: its workflow's promises, under their queue. */
  promises?: PromiseChanges;
  /** Another invocation's committed outcome (services/attachments.ts). */
  outcomeOf(id: string): Promise<TargetOutcome>;
}

export interface CommandOutcome {
  notifications: JournalEntry[];
  timersAdd: Timer[];
  outbox: OutboxMessage[];
  state: StateOp[];
  /** Attach commands whose target has not completed: to be answered once it does, after the commit. */
  attachWaits: Array<{ completionId: number; targetId: string }>;
}

export function emptyOutcome(): CommandOutcome {
  return { notifications: [], timersAdd: [], outbox: [], state: [], attachWaits: [] };
}
