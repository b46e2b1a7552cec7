/**
 * Attach from a handler (service-protocol.md §6.2, §9.9): an Attach command whose target has
 * not completed is answered once it does, with `AttachInvocationCompletionNotification`.
 *
 * The wait runs in memory; an `attachWait` record written with the Attach command, and removed
 * in the commit that stores the answer, makes it durable: recovery renews the waits from those
 * records (`recover`) without reading any journal. Delivery is idempotent because a completion
 * id is answered at most once (§13 rule 5). A target that is still an undelivered `invoke`
 * message counts as existing: its caller may attach before it is created.
 */
import { MessageType } from '../../protocol/messages.js';
import { Fenced, type Store } from '../../store/types.js';
import { attachWaitKey, RecordKind, type AttachWait } from '../../model/persisted.js';
import type { CompletedInvocation } from '../../model/persisted.js';
import { completionResult, NOT_FOUND } from '../kernel/results.js';
import type { TargetOutcome } from '../invoker/commands/index.js';
import type { ActorCache } from './actors.js';
import type { Delivery } from './delivery.js';
import type { RetryScheduler } from './retry.js';

export interface AttachmentsDeps {
  readonly store: Store;
  readonly actors: ActorCache;
  /**
   * Waits for the target's outcome on the owner of its partition (runtime/operations.ts), which
   * alone sees it end: one forgotten before it started (cancelled, killed) is gone from the store
   * at once, and only its owner's waiters hear how it ended.
   */
  attach(id: string): Promise<CompletedInvocation | undefined>;
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
    if (stored)
      return stored.context.completion
        ? { state: 'completed', completion: stored.context.completion }
        : { state: 'pending' };
    if (this.deps.delivery.isUndelivered(id)) return { state: 'pending' };
    // Delivered between the two looks: it is stored by now.
    const again = await this.deps.actors.stored(id);
    if (!again) return { state: 'missing' };
    return again.context.completion
      ? { state: 'completed', completion: again.context.completion }
      : { state: 'pending' };
  }

  /** A stored Attach command waits for its target: answer it when the target completes. */
  watch(callerId: string, completionId: number, targetId: string): void {
    const key = `${callerId}:${completionId}`;
    if (this.watching.has(key)) return;
    this.watching.add(key);
    const answer = async () => {
      try {
        await this.answer(callerId, completionId, targetId);
      } catch (err) {
        // The caller's partition may have moved: whoever recovers it renews the wait, here or
        // on its next owner (answering twice is harmless, a completion id is answered once).
        if (err instanceof Fenced) this.watching.delete(key);
        throw err;
      }
      this.watching.delete(key);
    };
    answer().catch((err: unknown) =>
      this.deps.retry.later(`invocation ${callerId}: attach to ${targetId}`, err, answer),
    );
  }

  /** Recovery: the waits of this partition whose answer is not stored yet. */
  async recover(partition: number): Promise<number> {
    const keys = await this.deps.store.listRecords(partition, RecordKind.attachWait);
    for (const key of keys) {
      const w = (await this.deps.store.getRecord(partition, RecordKind.attachWait, key)) as AttachWait | undefined;
      if (w) this.watch(w.callerId, w.completionId, w.targetId);
    }
    return keys.length;
  }

  private async answer(callerId: string, completionId: number, targetId: string): Promise<void> {
    await this.deps.delivery.whenCreated(targetId);
    const done = await this.deps.attach(targetId);
    const result = done ? completionResult(done.completion) : { failure: NOT_FOUND };
    const record = {
      records: [{ kind: RecordKind.attachWait, key: attachWaitKey(callerId, completionId), value: null }],
    };
    const stored = await this.deps.delivery.notify(
      callerId,
      MessageType.AttachInvocationCompletionNotification,
      { completionId, ...result },
      record,
    );
    // The caller ended meanwhile (killed, purged): nobody waits any more.
    if (!stored) await this.deps.store.commit({ partition: this.deps.actors.partitionOf(callerId), ...record });
  }
}
