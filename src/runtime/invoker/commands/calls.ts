/**
 * Calls and one-way calls (service-protocol.md §9.4): the callee's id is chosen here and
 * answered at once; the callee itself is created by delivering the outbox message this commit
 * writes (the kernel's delivery), with the caller to answer when it is a call.
 */
import {
  decodeCallCommand,
  decodeOneWayCallCommand,
  encodeNotification,
  MessageType,
} from '../../../protocol/messages.js';
import { invocationIdToString, newInvocationId, partitionKeyOf, unkeyedPartitionKey } from '../../../protocol/ids.js';
import type { Target } from '../../../../machines/invocation.js';
import { isWorkflowRun } from '../../../registry/types.js';
import type { JournalEntry } from '../../../store/types.js';
import { idempotentInvocationId, workflowRunId } from '../../../model/ids.js';
import type { OutboxBody } from '../../../model/outbox.js';
import { CommandRejected, emptyOutcome, type CommandOutcome, type CommandScope } from './scope.js';

/** The callee's target and id: a workflow run and an idempotent call name one invocation, whoever makes them (model/ids.ts). */
function callee(
  scope: CommandScope,
  c: { serviceName: string; handlerName: string; key: string; idempotencyKey?: string },
): { target: Target; id: string } {
  const resolved = scope.registry.resolveHandler(c.serviceName, c.handlerName);
  if (!resolved)
    throw new CommandRejected(404, `service '${c.serviceName}' or its handler '${c.handlerName}' not found`);
  const ty = resolved.service.ty;
  const keyed = ty !== 'Service';
  const target: Target = {
    service: c.serviceName,
    handler: c.handlerName,
    serviceTy: ty,
    ...(keyed ? { key: c.key } : {}),
  };
  if (isWorkflowRun(resolved)) return { target, id: workflowRunId(target.service, c.key) };
  if (c.idempotencyKey !== undefined)
    return { target, id: idempotentInvocationId(target.service, target.key, target.handler, c.idempotencyKey) };
  return {
    target,
    id: invocationIdToString(newInvocationId(keyed ? partitionKeyOf(c.key) : unkeyedPartitionKey(scope.now))),
  };
}

export function callCommand(scope: CommandScope, entry: JournalEntry): CommandOutcome {
  const isCall = entry.type === MessageType.CallCommand;
  const c = isCall ? decodeCallCommand(entry.payload) : decodeOneWayCallCommand(entry.payload);
  const { target, id } = callee(scope, c);
  const body: OutboxBody = {
    kind: 'invoke',
    invocationId: id,
    target,
    input: Buffer.from(c.parameter).toString('base64'),
    headers: c.headers,
    parent: { invocationId: scope.invocationId, target: scope.target },
    ...(isCall
      ? {
          caller: {
            invocationId: scope.invocationId,
            completionId: (c as { resultCompletionId: number }).resultCompletionId,
          },
        }
      : {}),
    ...('invokeTime' in c && c.invokeTime > 0 ? { executeAt: c.invokeTime } : {}),
    ...(c.idempotencyKey !== undefined ? { idempotencyKey: c.idempotencyKey } : {}),
  };
  const out = emptyOutcome();
  out.outbox.push({ id: scope.nextMessageId(), body });
  out.notifications.push({
    type: MessageType.CallInvocationIdCompletionNotification,
    payload: encodeNotification({ completionId: c.invocationIdNotificationIdx, invocationId: id }),
  });
  return out;
}
