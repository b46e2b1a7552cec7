/**
 * A Kafka topic read by a consumer group (the subscription's `group.id`) with
 * @platformatic/kafka, which is pure TypeScript, actively maintained and runs on Node 20
 * (its 1.x line; kafkajs is stable but has been looking for maintainers since 2023).
 *
 * Offsets are committed per partition once the invocations of a batch are stored; a batch is
 * in order per partition, so committing its last offset commits a contiguous prefix. After a
 * failure the stream is reopened from the committed offsets.
 *
 * The cluster's properties map to the client's options: `bootstrap.servers` (or
 * `metadata.broker.list`), `client.id` (the subscription's), `security.protocol` SSL /
 * SASL_SSL, `sasl.mechanism`, `sasl.username`, `sasl.password`.
 */
import { once } from 'node:events';
import { Consumer, type Message, type MessagesStream, type SASLMechanismValue } from '@platformatic/kafka';
import type { Header } from '../../protocol/messages.js';
import type { MessageSource, SourceMessage, StartAt } from '../source.js';

const BATCH = 100;
const WAIT_MS = 1000;

export interface KafkaSourceOptions {
  properties: Record<string, string>;
  topic: string;
  groupId: string;
  clientId: string;
  startAt: StartAt;
}

type KafkaRecord = Message<Buffer, Buffer, Buffer, Buffer>;

function clientOptions(properties: Record<string, string>) {
  const brokers = (properties['bootstrap.servers'] ?? properties['metadata.broker.list'] ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  const protocol = (properties['security.protocol'] ?? '').toUpperCase();
  const mechanism = properties['sasl.mechanism'] as SASLMechanismValue | undefined;
  return {
    bootstrapBrokers: brokers,
    ...(protocol === 'SSL' || protocol === 'SASL_SSL' ? { tls: {} } : {}),
    ...(protocol.startsWith('SASL') && mechanism
      ? {
          sasl: { mechanism, username: properties['sasl.username'] ?? '', password: properties['sasl.password'] ?? '' },
        }
      : {}),
  };
}

function messageOf(m: KafkaRecord): SourceMessage {
  const headers: Header[] = [...m.headers].map(([k, v]) => ({ key: k.toString(), value: v.toString() }));
  return {
    topic: m.topic,
    stream: String(m.partition),
    position: String(m.offset),
    key: m.key && m.key.length > 0 ? m.key.toString() : undefined,
    value: m.value ?? new Uint8Array(),
    timestamp: Number(m.timestamp),
    headers,
  };
}

export class KafkaSource implements MessageSource {
  private readonly consumer: Consumer<Buffer, Buffer, Buffer, Buffer>;
  private stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined;
  private readonly handed = new Map<string, KafkaRecord>();

  constructor(private readonly opts: KafkaSourceOptions) {
    this.consumer = new Consumer({ groupId: opts.groupId, clientId: opts.clientId, ...clientOptions(opts.properties) });
  }

  async next(signal: AbortSignal): Promise<SourceMessage[]> {
    const stream = await this.open();
    const out: SourceMessage[] = [];
    let m = stream.read() as KafkaRecord | null;
    if (m === null) {
      await once(stream, 'readable', { signal: AbortSignal.any([signal, AbortSignal.timeout(WAIT_MS)]) }).catch(
        () => undefined,
      );
      m = stream.read() as KafkaRecord | null;
    }
    for (; m !== null && out.length < BATCH; m = out.length < BATCH ? (stream.read() as KafkaRecord | null) : null) {
      const message = messageOf(m);
      this.handed.set(`${message.stream}/${message.position}`, m);
      out.push(message);
    }
    return out;
  }

  async ack(messages: SourceMessage[]): Promise<void> {
    const lastPerPartition = new Map<string, SourceMessage>();
    for (const m of messages) lastPerPartition.set(m.stream, m);
    for (const m of lastPerPartition.values()) {
      const record = this.handed.get(`${m.stream}/${m.position}`);
      if (!record) throw new Error(`kafka: record ${m.stream}/${m.position} is not held`);
      await record.commit();
    }
    for (const m of messages) this.handed.delete(`${m.stream}/${m.position}`);
  }

  rewind(): void {
    const stream = this.stream;
    this.stream = undefined;
    this.handed.clear();
    if (stream) void Promise.resolve(stream.close()).catch(() => undefined);
  }

  async lag(): Promise<number | undefined> {
    const lag = await this.consumer.getLag({ topics: [this.opts.topic] });
    let sum = 0n;
    for (const partitions of lag.values()) for (const l of partitions) if (l > 0n) sum += l;
    return Number(sum);
  }

  async close(): Promise<void> {
    await Promise.resolve(this.consumer.close(true)).catch(() => undefined);
  }

  private async open(): Promise<MessagesStream<Buffer, Buffer, Buffer, Buffer>> {
    this.stream ??= await this.consumer.consume({
      topics: [this.opts.topic],
      autocommit: false,
      mode: 'committed',
      fallbackMode: this.opts.startAt,
    });
    return this.stream;
  }
}
