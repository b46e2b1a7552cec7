/**
 * Ids of invocations that must exist only once: a workflow id's run, and a request with an
 * idempotency key. The id is derived from what identifies the request, so every path that
 * names it (ingress call or send, a handler's call, lookup, attach by target) finds the same
 * invocation. The partition key is the target's (partitioning.ts `targetPartitionKey`: the
 * scope's, else the object key's / workflow id's), else the idempotency key's, so these
 * invocations share a partition with their key's lock.
 */
import { deterministicInvocationId, invocationIdToString, partitionKeyOf } from '../protocol/ids.js';
import { targetPartitionKey } from './partitioning.js';

export function workflowRunId(service: string, workflowKey: string, scope?: string): string {
  const parts = scope === undefined ? ['wf', service, workflowKey] : ['wf', scope, service, workflowKey];
  return invocationIdToString(deterministicInvocationId(targetPartitionKey({ key: workflowKey, scope })!, parts));
}

export function idempotentInvocationId(
  service: string,
  key: string | undefined,
  handler: string,
  idempotencyKey: string,
  scope?: string,
): string {
  // JSON keeps the parts apart: keys may contain any character, commas included.
  const what = JSON.stringify([service, key ?? null, handler, idempotencyKey]);
  const parts = scope === undefined ? ['ik', what] : ['ik', scope, what];
  return invocationIdToString(
    deterministicInvocationId(targetPartitionKey({ key, scope }) ?? partitionKeyOf(idempotencyKey), parts),
  );
}
