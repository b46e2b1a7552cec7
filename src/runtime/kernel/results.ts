/**
 * An invocation's result as other invocations receive it: the notification fields for a
 * completed target, and restate-server's not-found failure.
 */
import type { Completion, Failure } from '../../../machines/invocation.js';
import type { Notification } from '../../protocol/messages.js';

/** restate-server's NOT_FOUND_INVOCATION_ERROR. */
export const NOT_FOUND: Failure = { code: 404, message: 'not found' };

/** The notification result for a completed target: its output value or its failure. */
export function completionResult(completion: Completion): Pick<Notification, 'value' | 'failure'> {
  if ('ok' in completion) return { value: Buffer.from(completion.ok, 'base64') };
  const { code, message, metadata } = completion.failure;
  return { failure: { code, message, ...(metadata && metadata.length > 0 ? { metadata } : {}) } };
}

/** A notification result carried by an outbox message (base64 value, failure, or nothing: void). */
export function messageResult(body: {
  value?: string;
  failure?: Notification['failure'];
}): Pick<Notification, 'value' | 'failure' | 'void'> {
  if (body.failure) return { failure: body.failure };
  if (body.value !== undefined) return { value: Buffer.from(body.value, 'base64') };
  return { void: true };
}
