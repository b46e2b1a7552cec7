/**
 * AttachInvocation and GetInvocationOutput by invocation id (service-protocol.md §6.2, §9.9).
 *
 * Get-output is answered in the same commit as its command. Attach is answered in that commit
 * only when the target has already completed; otherwise the runtime waits for the target and
 * then stores `AttachInvocationCompletionNotification` (`Runtime.watchAttach`). The waiting is
 * kept in memory, and the journal is what makes it durable: an Attach command without its
 * completion is found again after a restart (`unansweredAttaches`), and delivery is
 * idempotent because a completion id is answered at most once (§13 rule 5).
 */
import { decodeAttachInvocationCommand, MessageType, type Notification } from '../protocol/messages.js';
import { parseInvocationId } from '../protocol/ids.js';
import type { Completion, Failure } from '../../machines/invocation.js';
import type { Store } from '../store/types.js';
import type { OutboxBody } from './outbox.js';
import type { PersistedInvocation } from './invocation-host.js';
import type { JournalView } from './journal.js';
import { partitionOf } from './partitioning.js';

/** restate-server's NOT_FOUND_INVOCATION_ERROR. */
export const NOT_FOUND: Failure = { code: 404, message: 'not found' };

export type TargetOutcome = { state: 'completed'; completion: Completion } | { state: 'pending' } | { state: 'missing' };

/**
 * The target's committed outcome. An id that is not stored yet but has an `invoke` message
 * waiting in some outbox is pending: a caller gets a callee's id in the commit that writes that
 * message, before it is delivered, and may attach to it at once (also after a restart, when
 * outboxes are re-driven in no particular order).
 */
export async function targetOutcome(store: Store, partitions: number, id: string): Promise<TargetOutcome> {
  const found = async () => (await store.loadInvocation(partitionOf(parseInvocationId(id).partitionKey, partitions), id)) as PersistedInvocation | undefined;
  const before = await found();
  if (before) return outcomeOf(before);
  for (let p = 0; p < partitions; p++) {
    const waiting = (await store.outbox(p)).some((m) => {
      const body = m.body as OutboxBody;
      return body.kind === 'invoke' && body.invocationId === id;
    });
    if (waiting) return { state: 'pending' };
  }
  // Delivered while the outboxes were read: it is stored by now.
  const after = await found();
  return after ? outcomeOf(after) : { state: 'missing' };
}

function outcomeOf(p: PersistedInvocation): TargetOutcome {
  return p.context.completion ? { state: 'completed', completion: p.context.completion } : { state: 'pending' };
}

/** The notification result for a completed target: its output value or its failure. */
export function completionResult(completion: Completion): Pick<Notification, 'value' | 'failure'> {
  if ('ok' in completion) return { value: Buffer.from(completion.ok, 'base64') };
  const { code, message, metadata } = completion.failure;
  return { failure: { code, message, ...(metadata && metadata.length > 0 ? { metadata } : {}) } };
}

/** Attach commands of the journal with an invocation-id target and no completion yet. */
export function unansweredAttaches(journal: JournalView): Array<{ completionId: number; targetId: string }> {
  const out: Array<{ completionId: number; targetId: string }> = [];
  for (const e of journal.entries) {
    if (e.type !== MessageType.AttachInvocationCommand) continue;
    const c = decodeAttachInvocationCommand(e.payload);
    if (c.invocationId !== undefined && !journal.completions.has(c.resultCompletionId)) {
      out.push({ completionId: c.resultCompletionId, targetId: c.invocationId });
    }
  }
  return out;
}
