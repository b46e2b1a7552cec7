/**
 * What the subscription engine needs from a message broker: messages in order per stream, and
 * a way to acknowledge them. Kafka, Redis Streams and NATS JetStream each implement it in
 * `sources/`; everything above (dedup, ordering, back-pressure, crash safety) is the engine's.
 */
import type { Header } from '../protocol/messages.js';

export interface SourceMessage {
  /** The Kafka topic, the Redis stream, the NATS subject the message was published to. */
  topic: string;
  /** Where positions count and order holds: a Kafka partition, a Redis stream, a JetStream stream. */
  stream: string;
  /** The message's place in `stream`: an offset, an entry id, a stream sequence. */
  position: string;
  /** The message key (UTF-8), if the message has one: a virtual object sink's key. */
  key: string | undefined;
  value: Uint8Array;
  /** Epoch ms at which the broker took the message. */
  timestamp: number;
  /** The message's own headers, passed on to the handler. */
  headers: Header[];
}

export interface MessageSource {
  /**
   * The messages after those already handed out, in order per stream; after `rewind()` (and
   * at first) from the first one not acknowledged. Waits about a second when there is none,
   * then answers empty.
   */
  next(signal: AbortSignal): Promise<SourceMessage[]>;
  /** Tells the broker these messages are done with; called only once their invocations are stored. */
  ack(messages: SourceMessage[]): Promise<void>;
  /** After a failure: the next `next()` starts again at the first unacknowledged message. */
  rewind(): void;
  /** Messages the broker holds for this subscription that are not acknowledged yet, if it can tell. */
  lag(): Promise<number | undefined>;
  close(): Promise<void>;
}

/** Where a new consumer starts: Kafka's `auto.offset.reset` (latest unless the subscription's options say earliest). */
export type StartAt = 'earliest' | 'latest';

export function startAtOf(options: Record<string, string>): StartAt {
  return options['auto.offset.reset'] === 'earliest' ? 'earliest' : 'latest';
}
