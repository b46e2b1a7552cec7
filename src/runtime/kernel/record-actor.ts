/**
 * What the actors persisted as one record each (key locks, scope limiters) share: the snapshot
 * and the record as the store holds it, and the rule for a change. A change expects the record
 * to hold what this actor last read or wrote (a compare-and-set in the store); the in-memory
 * state moves only once the commit that stores it succeeded; a failed commit leaves the outcome
 * unknown, so the actor is stale from then on and must be read again from the store.
 */
import type { RecordWrite } from '../../store/types.js';
import { ActorRetired } from './retired.js';

export abstract class RecordActor<S, C extends { record: RecordWrite }> {
  private stale = false;

  /**
   * @param stored the record exactly as the store holds it (null: none yet), expected by the
   *   next change
   */
  constructor(
    protected snapshot: S,
    protected stored: unknown,
  ) {}

  /** What the actor is, for messages. */
  protected abstract readonly name: string;

  /** A commit failed: the actor leaves, its outcome unknown. */
  protected abstract lost(err: unknown): void;

  /**
   * A change queued behind a failed one is refused as a job of an actor that left memory: the
   * cache runs it on the actor read again from the store (`ObjectLocks.with`, `Limiters.with`).
   */
  protected checkFresh(): void {
    if (this.stale) throw new ActorRetired(this.name);
  }

  /**
   * Like `apply`, but moves to `next` as soon as `commit` has handed the change to the store,
   * then calls `handedOver`: a change made after it is computed from it and committed behind it
   * (a store commits in order). Its record expects this one's, so the store refuses it if this
   * commit fails. Resolves, or fails, with the commit.
   */
  protected async applyAhead(
    next: S,
    change: C,
    commit: (change: C) => Promise<void>,
    handedOver: () => void,
  ): Promise<C> {
    const committed = commit(change);
    this.moveTo(next, change);
    handedOver();
    await this.answer(committed);
    return change;
  }

  /** Stores `change` through `commit` (which adds the caller's writes), then moves to `next`. */
  protected async apply(next: S, change: C, commit: (change: C) => Promise<void>): Promise<C> {
    await this.answer(commit(change));
    this.moveTo(next, change);
    return change;
  }

  private moveTo(next: S, change: C): void {
    this.snapshot = next;
    this.stored = change.record.value;
  }

  /** The commit's answer; a failed one leaves the actor stale, its outcome unknown. */
  private async answer(committed: Promise<void>): Promise<void> {
    try {
      await committed;
    } catch (err) {
      this.stale = true;
      this.lost(err);
      throw err;
    }
  }
}
