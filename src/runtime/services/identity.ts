/**
 * What an invocation request is, before it exists: whether it must exist once (and its id
 * then, kernel/ids.ts), whether it runs under its key's lock, and how long it is kept after
 * completing. Decided once, at creation, and kept in the invocation's context.
 */
import { isWorkflowRun, type EffectiveHandler } from '../../registry/types.js';
import { idempotentInvocationId, workflowRunId } from '../kernel/ids.js';
import type { InvokeRequest } from '../types.js';

/** The deterministic id of an invocation that must exist only once, if it is one. */
export function identityOf(req: InvokeRequest, handler: EffectiveHandler | undefined): string | undefined {
  const { service, handler: name, key } = req.target;
  if (handler && isWorkflowRun(handler) && key !== undefined) return workflowRunId(service, key);
  if (req.idempotencyKey === undefined) return undefined;
  return idempotentInvocationId(service, key, name, req.idempotencyKey);
}

/** How long the completed invocation stays: workflow, idempotency or journal retention (reference §2.5). */
export function retentionOf(req: InvokeRequest, handler: EffectiveHandler): number {
  if (isWorkflowRun(handler)) return handler.workflowCompletionRetention;
  // The key deduplicates for its retention; then it is free again, and so is the id it names.
  if (req.idempotencyKey !== undefined) return handler.idempotencyRetention;
  return handler.journalRetention;
}

/** Exclusive handlers run one at a time per key: a virtual object's non-shared handlers, a workflow's `run`. */
export function isExclusive(handler: EffectiveHandler): boolean {
  if (handler.service.ty === 'VirtualObject') return handler.handler.ty !== 'Shared';
  return isWorkflowRun(handler);
}
