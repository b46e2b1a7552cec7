/**
 * Attach from a handler (service-protocol.md §6.2, §9.9): an Attach command whose target has
 * not completed is answered once it does, with `AttachInvocationCompletionNotification`.
 *
 * The wait is kept in memory and the journal makes it durable: an Attach command without its
 * completion is found again after a restart (`recover`), and delivery is idempotent because a
 * completion id is answered at most once (§13 rule 5). A target that is still an undelivered
 * `invoke` message counts as existing: its caller may attach before it is created.
 */
import { decodeAttachInvocationCommand, MessageType } from '../../protocol/messages.js';
import type { JournalView } from '../kernel/journal.js';
import { completionResult, NOT_FOUND } from '../kernel/results.js';
import type { TargetOutcome } from '../invoker/commands/index.js';
import type { ActorCache } from './actors.js';
import type { Delivery } from './delivery.js';
import type { Invocations } from './invocations.js';
import type { RetryScheduler } from './retry.js';

export interface AttachmentsDeps {
  readonly actors: ActorCache;
  readonly invocations: Invocations;
  readonly delivery: Delivery;
  readonly retry: RetryScheduler;
}

export class Attachments {
  /** `caller:completion` of the waits running now: renewing one that runs is a no-op. */
  private readonly watching = new Set<string>();

  constructor(private readonly deps: AttachmentsDeps) {}

  /** The target's committed outcome; an undelivered callee is pending. */
  async outcomeOf(id: string): Promise<TargetOutcome> {
    const stored = await this.deps.actors.persisted(id);
    if (stored) return stored.context.completion ? { state: 'completed', completion: stored.context.completion } : { state: 'pending' };
    if (this.deps.delivery.isUndelivered(id)) return { state: 'pending' };
    // Delivered between the two looks: it is stored by now.
    const again = await this.deps.actors.stored(id);
    if (!again) return { state: 'missing' };
    return again.context.completion ? { state: 'completed', completion: again.context.completion } : { state: 'pending' };
  }

  /** A stored Attach command waits for its target: answer it when the target completes. */
  watch(callerId: string, completionId: number, targetId: string): void {
    const key = `${callerId}:${completionId}`;
    if (this.watching.has(key)) return;
    this.watching.add(key);
    const answer = async () => {
      await this.answer(callerId, completionId, targetId);
      this.watching.delete(key);
    };
    answer().catch((err: unknown) => this.deps.retry.later(`invocation ${callerId}: attach to ${targetId}`, err, answer));
  }

  /** After a restart: the journal of a live invocation says which attaches still wait. */
  recover(journal: JournalView, callerId: string): number {
    const waiting = unansweredAttaches(journal);
    for (const w of waiting) this.watch(callerId, w.completionId, w.targetId);
    return waiting.length;
  }

  private async answer(callerId: string, completionId: number, targetId: string): Promise<void> {
    await this.deps.delivery.whenCreated(targetId);
    const done = await this.deps.invocations.attach(targetId);
    const result = done ? completionResult(done.completion) : { failure: NOT_FOUND };
    await this.deps.delivery.notify(callerId, MessageType.AttachInvocationCompletionNotification, { completionId, ...result });
  }
}

/** Attach commands of the journal with an invocation-id target and no completion yet. */
function unansweredAttaches(journal: JournalView): Array<{ completionId: number; targetId: string }> {
  const out: Array<{ completionId: number; targetId: string }> = [];
  for (const e of journal.entries) {
    if (e.type !== MessageType.AttachInvocationCommand) continue;
    const c = decodeAttachInvocationCommand(e.payload);
    if (c.invocationId !== undefined && !journal.completions.has(c.resultCompletionId)) out.push({ completionId: c.resultCompletionId, targetId: c.invocationId });
  }
  return out;
}
