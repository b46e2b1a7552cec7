/**
 * One message → one invocation request of the sink handler. The request carries an
 * idempotency key made of (subscription, stream, position), so the invocation's id is
 * deterministic (model/ids.ts): a message delivered again after a crash finds the
 * invocation it created before and creates nothing. The key's retention (the handler's
 * idempotency retention) is how long such a redelivery is recognised.
 */
import type { Header } from '../protocol/messages.js';
import type { EffectiveHandler } from '../registry/types.js';
import type { InvokeRequest } from '../runtime/types.js';
import type { SourceMessage } from './source.js';

/** The invocation headers Restate gives a handler invoked from a Kafka record, in its order; every source uses them. */
export const MessageHeader = {
  offset: 'kafka.offset',
  topic: 'kafka.topic',
  partition: 'kafka.partition',
  timestamp: 'kafka.timestamp',
  subscriptionId: 'restate.subscription.id',
  /** The key's bytes in URL-safe base64 with padding, as Restate writes it. */
  key: 'kafka.key',
} as const;

export function idempotencyKeyOf(subscriptionId: string, m: SourceMessage): string {
  return `${subscriptionId}/${m.stream}/${m.position}`;
}

/** Keyed sinks (virtual objects, workflows) take the message key as the object key; a message without one goes to key ''. */
export function objectKeyOf(handler: EffectiveHandler, m: SourceMessage): string | undefined {
  return handler.service.ty === 'Service' ? undefined : (m.key ?? '');
}

const urlSafeBase64 = (text: string) => Buffer.from(text).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');

/** Restate's headers first, then the message's own (Restate passes only its own). */
function headersOf(subscriptionId: string, m: SourceMessage): Header[] {
  const own: Header[] = [
    { key: MessageHeader.offset, value: m.position },
    { key: MessageHeader.topic, value: m.topic },
    { key: MessageHeader.partition, value: m.stream },
    { key: MessageHeader.timestamp, value: String(m.timestamp) },
    { key: MessageHeader.subscriptionId, value: subscriptionId },
  ];
  if (m.key !== undefined) own.push({ key: MessageHeader.key, value: urlSafeBase64(m.key) });
  return [...own, ...m.headers];
}

export function invocationRequestOf(
  subscriptionId: string,
  handler: EffectiveHandler,
  m: SourceMessage,
): InvokeRequest {
  const key = objectKeyOf(handler, m);
  return {
    target: {
      service: handler.service.name,
      handler: handler.handler.name,
      serviceTy: handler.service.ty,
      ...(key !== undefined ? { key } : {}),
    },
    input: m.value,
    headers: headersOf(subscriptionId, m),
    retryPolicy: handler.retryPolicy,
    invokedBy: 'subscription',
    subscriptionId,
    idempotencyKey: idempotencyKeyOf(subscriptionId, m),
  };
}
