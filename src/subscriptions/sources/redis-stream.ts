/**
 * A Redis stream read through a consumer group: `XREADGROUP` hands entries to this consumer,
 * `XACK` acknowledges them once their invocations are stored. Entries this consumer was handed
 * and did not acknowledge (it crashed) are read again first, from its pending list, so their
 * order holds across a restart; entries that another consumer of the group left pending for
 * `CLAIM_IDLE_MS` (it died) are taken over with `XAUTOCLAIM`.
 *
 * An entry's field `key` is the message key and `value` its body; other fields become headers.
 * On a Redis Cluster (the store's own, `redis-cluster://`) the stream is one key in one slot and
 * every command here names only it, so ioredis sends each to the stream's master.
 */
import type { RedisOptions } from 'ioredis';
import { createRedisClient, type RedisClient } from '../../store/redis/connect.js';
import type { Header } from '../../protocol/messages.js';
import type { MessageSource, SourceMessage, StartAt } from '../source.js';

const BATCH = 100;
const BLOCK_MS = 1000;
/** Entries pending this long with another consumer are taken over. */
const CLAIM_IDLE_MS = 30_000;
const CLAIM_EVERY_MS = 10_000;

export interface RedisStreamOptions {
  url: string;
  redis?: RedisOptions;
  stream: string;
  group: string;
  /** Stable across restarts, so the pending entries of a crashed run are this consumer's own. */
  consumer: string;
  startAt: StartAt;
}

type RawEntry = [Buffer, Buffer[] | null];

function messageOf(stream: string, [rawId, fields]: RawEntry): SourceMessage {
  const id = rawId.toString();
  let key: string | undefined;
  let value: Uint8Array = new Uint8Array();
  const headers: Header[] = [];
  for (let i = 0; fields && i + 1 < fields.length; i += 2) {
    const name = fields[i]!.toString();
    if (name === 'key') key = fields[i + 1]!.toString();
    else if (name === 'value') value = fields[i + 1]!;
    else headers.push({ key: name, value: fields[i + 1]!.toString() });
  }
  return { topic: stream, stream, position: id, key, value, timestamp: Number(id.split('-')[0]), headers };
}

export class RedisStreamSource implements MessageSource {
  /** Reads (`XREADGROUP`, `XAUTOCLAIM`) and the group's creation. */
  private readonly redis: RedisClient;
  /** Acknowledgements and the lag, never behind a blocked read. */
  private readonly control: RedisClient;
  private groupReady = false;
  /** Reading this consumer's own pending entries (at start and after a failure) before new ones. */
  private backlog = true;
  private lastClaim = 0;
  /** ioredis leaves commands sent after `disconnect()` pending forever: none are sent then. */
  private closed = false;

  constructor(private readonly opts: RedisStreamOptions) {
    this.redis = this.connection();
    // XREADGROUP BLOCK holds `redis` for up to BLOCK_MS: acknowledgements and the lag queued
    // behind it, and a lag asked with a one-second timeout was answered "unknown".
    this.control = this.connection();
  }

  /**
   * Commands fail rather than queue while Redis is away, so the consumer's backoff, not an
   * unbounded queue, waits the outage out.
   *
   * A command in flight when the connection breaks fails at once and is never sent again
   * (maxRetriesPerRequest 0, no resend): Redis may have run it and lost only its reply. For
   * `XREADGROUP … >` that means entries went into this consumer's pending list unseen; a
   * resent read would hand out the entries after them, and the lost ones would come later,
   * out of key order (the store's restart in test/e2e/subscriptions-redis.test.ts). Failing
   * instead makes the consumer rewind and read its pending entries first.
   */
  private connection(): RedisClient {
    const redis = createRedisClient(this.opts.url, {
      ...this.opts.redis,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      enableOfflineQueue: true,
    });
    redis.on('error', () => undefined);
    return redis;
  }

  async next(): Promise<SourceMessage[]> {
    if (this.closed) throw new Error('redis-stream: source closed');
    const { stream, group, consumer } = this.opts;
    await this.ensureGroup();
    if (this.backlog) {
      const own = await this.read('0', false);
      if (own.length > 0) return own;
      this.backlog = false;
    }
    if (Date.now() - this.lastClaim > CLAIM_EVERY_MS) {
      this.lastClaim = Date.now();
      const claimed = (await this.redis.callBuffer(
        'XAUTOCLAIM',
        stream,
        group,
        consumer,
        CLAIM_IDLE_MS,
        '0-0',
        'COUNT',
        BATCH,
      )) as [Buffer, RawEntry[]];
      const entries = await this.dropDeleted(claimed[1]);
      if (entries.length > 0) return entries.map((e) => messageOf(stream, e));
    }
    return this.read('>', true);
  }

  async ack(messages: SourceMessage[]): Promise<void> {
    await this.acknowledge(messages.map((m) => m.position));
  }

  private async acknowledge(ids: string[]): Promise<void> {
    await this.control.xack(this.opts.stream, this.opts.group, ...ids);
  }

  rewind(): void {
    this.backlog = true;
    this.groupReady = false;
  }

  /** Entries not yet handed to the group (XINFO's `lag`) plus those handed out and not acknowledged. */
  async lag(): Promise<number | undefined> {
    const groups = (await this.control.xinfo('GROUPS', this.opts.stream)) as unknown[][];
    for (const g of groups) {
      const info = new Map<string, unknown>();
      for (let i = 0; i + 1 < g.length; i += 2) info.set(String(g[i]), g[i + 1]);
      if (info.get('name') !== this.opts.group) continue;
      const lag = info.get('lag');
      return typeof lag === 'number' ? lag + Number(info.get('pending') ?? 0) : undefined;
    }
    return undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.redis.disconnect();
    this.control.disconnect();
  }

  private async read(from: '0' | '>', block: boolean): Promise<SourceMessage[]> {
    const { stream, group, consumer } = this.opts;
    for (;;) {
      const args: Array<string | number> = [
        'GROUP',
        group,
        consumer,
        'COUNT',
        BATCH,
        ...(block ? ['BLOCK', BLOCK_MS] : []),
        'STREAMS',
        stream,
        from,
      ];
      const reply = (await this.redis.callBuffer('XREADGROUP', ...args)) as Array<[Buffer, RawEntry[]]> | null;
      const entries = reply?.[0]?.[1] ?? [];
      const kept = await this.dropDeleted(entries);
      // A page of pending entries that were all deleted meanwhile: the next page may hold live ones.
      if (kept.length > 0 || entries.length === 0 || from === '>') return kept.map((e) => messageOf(stream, e));
    }
  }

  /** Entries deleted from the stream while pending come back without fields: acknowledged, so they leave the pending list. */
  private async dropDeleted(entries: RawEntry[]): Promise<RawEntry[]> {
    const deleted = entries.filter((e) => e[1] === null).map((e) => e[0].toString());
    if (deleted.length > 0) await this.acknowledge(deleted);
    return entries.filter((e) => e[1] !== null);
  }

  private async ensureGroup(): Promise<void> {
    if (this.groupReady) return;
    if (this.redis.status === 'wait') await this.redis.connect();
    try {
      await this.redis.xgroup(
        'CREATE',
        this.opts.stream,
        this.opts.group,
        this.opts.startAt === 'earliest' ? '0' : '$',
        'MKSTREAM',
      );
    } catch (err) {
      if (!String(err).includes('BUSYGROUP')) throw err;
    }
    this.groupReady = true;
  }
}
