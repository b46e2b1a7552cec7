/**
 * A NATS JetStream subject read through a durable pull consumer (named by the subscription's
 * `group.id`) on the stream that holds the subject. Messages are acknowledged one by one with
 * a confirmed ack (`ackAck`) once their invocations are stored.
 *
 * JetStream redelivers an unacknowledged message only after its ack wait, behind newer ones;
 * that would break key order after a crash. So whenever this source starts reading (at start
 * and after a failure) and the consumer holds unacknowledged messages, it is recreated to
 * start just after its ack floor: everything not acknowledged comes again, in stream order,
 * and the engine's dedup skips what was already created. The same goes for messages the server
 * sent while the connection was broken: they are lost on the way, yet wait for an ack until
 * their ack wait, so a fetch the connection broke under hands out nothing (see `next`).
 *
 * A message's header `key` is the message key; its other headers are passed on.
 */
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type Consumer,
  type ConsumerConfig,
  type JsMsg,
} from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Header } from '../../protocol/messages.js';
import type { MessageSource, SourceMessage, StartAt } from '../source.js';

const BATCH = 100;
const FETCH_EXPIRES_MS = 1000;
const ACK_WAIT_NS = 60_000_000_000;

export interface NatsJetStreamOptions {
  servers: string[];
  subject: string;
  durable: string;
  startAt: StartAt;
}

function messageOf(stream: string, m: JsMsg): SourceMessage {
  let key: string | undefined;
  const headers: Header[] = [];
  for (const [name, values] of m.headers ?? []) {
    if (name === 'key') key = values[0];
    else for (const value of values) headers.push({ key: name, value });
  }
  return {
    topic: m.subject,
    stream,
    position: String(m.seq),
    key,
    value: m.data,
    timestamp: Number(m.timestampNanos / 1_000_000n),
    headers,
  };
}

export class NatsJetStreamSource implements MessageSource {
  private connection: Promise<NatsConnection> | undefined;
  private consumer: { stream: string; consumer: Consumer } | undefined;
  /** Handed out, not acknowledged yet: the JetStream message to ack, by stream sequence. */
  private readonly handed = new Map<string, JsMsg>();
  private closed = false;
  /** How often the connection broke, and how often it had when the consumer was made ready. */
  private breaks = 0;
  private readyAt = 0;

  constructor(private readonly opts: NatsJetStreamOptions) {}

  async next(): Promise<SourceMessage[]> {
    const { stream, consumer } = await this.ready();
    const fetched: JsMsg[] = [];
    for await (const m of await consumer.fetch({ max_messages: BATCH, expires: FETCH_EXPIRES_MS })) fetched.push(m);
    // Messages the server sent while the connection was down never arrived, and the ones fetched
    // after the reconnection would overtake them: the consumer rewinds, and `ready` recreates
    // the JetStream consumer at its ack floor.
    if (this.breaks !== this.readyAt)
      throw new Error('nats: the connection broke while fetching; reading again from the first unacknowledged message');
    return fetched.map((m) => {
      const message = messageOf(stream, m);
      this.handed.set(message.position, m);
      return message;
    });
  }

  async ack(messages: SourceMessage[]): Promise<void> {
    await Promise.all(
      messages.map(async (m) => {
        const msg = this.handed.get(m.position);
        if (!msg) throw new Error(`nats: message ${m.position} is not held`);
        await msg.ackAck();
        this.handed.delete(m.position);
      }),
    );
  }

  rewind(): void {
    this.consumer = undefined;
    this.handed.clear();
  }

  async lag(): Promise<number | undefined> {
    if (!this.consumer) return undefined;
    const info = await this.consumer.consumer.info();
    return info.num_pending + info.num_ack_pending;
  }

  async close(): Promise<void> {
    this.closed = true;
    const nc = await this.connection?.catch(() => undefined);
    await nc?.close();
  }

  private connect(): Promise<NatsConnection> {
    if (this.connection) return this.connection;
    this.connection = connect({
      servers: this.opts.servers,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      name: `redstate ${this.opts.durable}`,
    });
    this.connection.then(
      (nc) => void this.countBreaks(nc).catch(() => undefined),
      // A failed first connect is tried again at the next read.
      () => (this.connection = undefined),
    );
    return this.connection;
  }

  private async countBreaks(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) if (s.type === 'disconnect') this.breaks++;
  }

  private async ready(): Promise<{ stream: string; consumer: Consumer }> {
    if (this.consumer && this.readyAt === this.breaks) return this.consumer;
    if (this.closed) throw new Error('nats: source closed');
    const nc = await this.connect();
    this.readyAt = this.breaks;
    const jsm = await jetstreamManager(nc);
    const stream = await jsm.streams.find(this.opts.subject);
    const { durable, subject, startAt } = this.opts;
    const existing = await jsm.consumers.info(stream, durable).catch(() => undefined);
    if (!existing || existing.num_ack_pending > 0) {
      if (existing) await jsm.consumers.delete(stream, durable);
      const from: Partial<ConsumerConfig> = existing
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: existing.ack_floor.stream_seq + 1 }
        : { deliver_policy: startAt === 'earliest' ? DeliverPolicy.All : DeliverPolicy.New };
      await jsm.consumers.add(stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        filter_subject: subject,
        ack_wait: ACK_WAIT_NS,
        ...from,
      });
    }
    this.consumer = { stream, consumer: await jetstream(nc).consumers.get(stream, durable) };
    return this.consumer;
  }
}
