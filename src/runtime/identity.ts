/**
 * What an invocation request is, before it exists: whether it must exist once (and its id
 * then), whether it runs under its key's lock, and how long it is kept after completing.
 *
 * Ids of invocations that must exist once: a workflow id's run, and a request with an
 * idempotency key. The id is derived from what identifies the request, so every path that
 * names it (ingress call or send, a handler's call, lookup, attach by target) finds the same
 * invocation. The partition key comes from the object key / workflow id, else from the
 * idempotency key, so these invocations share a partition with their key's lock.
 */
import { deterministicInvocationId, invocationIdToString, partitionKeyOf } from '../protocol/ids.js';
import type { EffectiveHandler } from '../registry/types.js';
import type { InvokeRequest } from './runtime.js';

export function workflowRunId(service: string, workflowKey: string): string {
  return invocationIdToString(deterministicInvocationId(partitionKeyOf(workflowKey), ['wf', service, workflowKey]));
}

export function idempotentInvocationId(service: string, key: string | undefined, handler: string, idempotencyKey: string): string {
  // JSON keeps the parts apart: keys may contain any character, commas included.
  const scope = JSON.stringify([service, key ?? null, handler, idempotencyKey]);
  return invocationIdToString(deterministicInvocationId(partitionKeyOf(key ?? idempotencyKey), ['ik', scope]));
}

/** The deterministic id of an invocation that must exist only once, if it is one. */
export function identityOf(req: InvokeRequest, handler: EffectiveHandler | undefined): string | undefined {
  const { service, handler: name, key } = req.target;
  if (handler?.service.ty === 'Workflow' && handler.handler.ty === 'Workflow' && key !== undefined) return workflowRunId(service, key);
  if (req.idempotencyKey === undefined) return undefined;
  return idempotentInvocationId(service, key, name, req.idempotencyKey);
}

/** How long the completed invocation stays: idempotency, workflow or journal retention (§2.5). */
export function retentionOf(req: InvokeRequest, handler: EffectiveHandler): number {
  if (handler.service.ty === 'Workflow' && handler.handler.ty === 'Workflow') return handler.workflowCompletionRetention;
  // The key deduplicates for its retention; then it is free again, and so is the id it names.
  if (req.idempotencyKey !== undefined) return handler.idempotencyRetention;
  return handler.journalRetention;
}

/** Exclusive handlers run one at a time per key: a virtual object's non-shared handlers, a workflow's `run`. */
export function isExclusive(handler: EffectiveHandler): boolean {
  if (handler.service.ty === 'VirtualObject') return handler.handler.ty !== 'Shared';
  return handler.service.ty === 'Workflow' && handler.handler.ty === 'Workflow';
}
