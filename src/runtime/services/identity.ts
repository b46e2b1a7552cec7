/**
 * What an invocation request is, before it exists: whether it must exist once (and its id
 * then, kernel/ids.ts), whether it runs under its key's lock, and how long it is kept after
 * completing. Decided once, at creation, and kept in the invocation's context.
 */
import { completionRetentionOf, isWorkflowRun, type EffectiveHandler } from '../../registry/types.js';
import { idempotentInvocationId, workflowRunId } from '../../model/ids.js';
import type { InvokeRequest } from '../types.js';

/** The deterministic id of an invocation that must exist only once, if it is one. */
export function identityOf(req: InvokeRequest, handler: EffectiveHandler | undefined): string | undefined {
  const { service, handler: name, key, scope } = req.target;
  if (handler && isWorkflowRun(handler) && key !== undefined) return workflowRunId(service, key, scope);
  if (req.idempotencyKey === undefined) return undefined;
  return idempotentInvocationId(service, key, name, req.idempotencyKey, scope);
}

/** How long the completed invocation stays; the auto key of the ingress does not count (reference §2.5). */
export function retentionOf(req: InvokeRequest, handler: EffectiveHandler): number {
  return completionRetentionOf(handler, req.idempotencyKey !== undefined);
}

/** Exclusive handlers run one at a time per key: a virtual object's non-shared handlers, a workflow's `run`. */
export function isExclusive(handler: EffectiveHandler): boolean {
  if (handler.service.ty === 'VirtualObject') return handler.handler.ty !== 'Shared';
  return isWorkflowRun(handler);
}
