/**
 * Ids of invocations that must exist only once: a workflow id's run, and a request with an
 * idempotency key. The id is derived from what identifies the request, so every path that
 * names it (ingress call or send, a handler's call, lookup, attach by target) finds the same
 * invocation. The partition key comes from the object key / workflow id, else from the
 * idempotency key, so these invocations share a partition with their key's lock.
 */
import { deterministicInvocationId, invocationIdToString, partitionKeyOf } from '../../protocol/ids.js';

export function workflowRunId(service: string, workflowKey: string): string {
  return invocationIdToString(deterministicInvocationId(partitionKeyOf(workflowKey), ['wf', service, workflowKey]));
}

export function idempotentInvocationId(service: string, key: string | undefined, handler: string, idempotencyKey: string): string {
  // JSON keeps the parts apart: keys may contain any character, commas included.
  const scope = JSON.stringify([service, key ?? null, handler, idempotencyKey]);
  return invocationIdToString(deterministicInvocationId(partitionKeyOf(key ?? idempotencyKey), ['ik', scope]));
}
