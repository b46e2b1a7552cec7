/**
 * The subscription engine: one consumer (consumer.ts) per subscription in the registry,
 * started when a subscription appears and stopped when it is deleted. It follows the
 * registry's extras by looking at them every second (they change only through the admin API).
 * With several nodes only one engine is active (server.ts: the owner of partition 0): two
 * nodes reading one source would split its messages between them, and a key's messages would
 * be created in whichever order the nodes got to them.
 */
import type { SubscriptionProgressRow } from '../query/rows.js';
import type { Registry } from '../registry/registry.js';
import type { Subscription } from '../registry/extras.js';
import type { Logger } from '../runtime/types.js';
import { SubscriptionConsumer, type SinkRuntime } from './consumer.js';
import { openSource, type StoreRedis } from './sources/open.js';

const RECONCILE_EVERY_MS = 1000;

export interface EngineDeps {
  registry: Registry;
  runtime: SinkRuntime;
  log: Logger;
  maxInFlight: number;
  storeRedis?: StoreRedis;
  /** Whether it consumes from the start (default true); see `setActive`. */
  active?: boolean;
}

export class SubscriptionEngine {
  private readonly consumers = new Map<string, SubscriptionConsumer>();
  /** Subscriptions that cannot be read here, with the reason (logged once). */
  private readonly failed = new Map<string, { subscription: Subscription; reason: string }>();
  private timer: NodeJS.Timeout | undefined;
  private reconciling: Promise<void> = Promise.resolve();
  private active: boolean;

  constructor(private readonly deps: EngineDeps) {
    this.active = deps.active ?? true;
  }

  start(): void {
    // A round's failure is logged where the rounds are chained (`reconcile`), never thrown.
    void this.reconcile();
    this.timer = setInterval(() => void this.reconcile(), RECONCILE_EVERY_MS);
  }

  /** This node starts or stops consuming every subscription; resolves once that is done. */
  setActive(active: boolean): Promise<void> {
    if (this.active === active) return this.reconciling;
    this.active = active;
    this.deps.log.info(
      `subscriptions: ${active ? 'consumed by this node from now on' : 'no longer consumed by this node'}`,
    );
    return this.reconcile();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.reconciling;
    await Promise.all([...this.consumers.values()].map((c) => c.stop()));
    this.consumers.clear();
  }

  async progress(): Promise<SubscriptionProgressRow[]> {
    const now = Date.now();
    const running = await Promise.all(
      [...this.consumers.values()].map(async (c): Promise<SubscriptionProgressRow> => ({
        subscriptionId: c.subscription.id,
        source: c.subscription.source,
        sink: c.subscription.sink,
        status: 'running',
        delivered: c.progress.delivered,
        inFlight: c.inFlightCount,
        lag: await c.lag(),
        ratePerSecond: c.progress.rate(now),
        lastStream: c.progress.lastStream,
        lastPosition: c.progress.lastPosition,
        lastMessageAt: c.progress.lastMessageAt,
        lastError: c.progress.lastError,
      })),
    );
    const failed = [...this.failed.values()].map(({ subscription: s, reason }): SubscriptionProgressRow => ({
      subscriptionId: s.id,
      source: s.source,
      sink: s.sink,
      status: 'failed',
      delivered: 0,
      inFlight: 0,
      lag: undefined,
      ratePerSecond: 0,
      lastStream: undefined,
      lastPosition: undefined,
      lastMessageAt: undefined,
      lastError: reason,
    }));
    return [...running, ...failed];
  }

  private reconcile(): Promise<void> {
    this.reconciling = this.reconciling
      .then(() => this.apply())
      .catch((err) => this.deps.log.error(`subscriptions: ${String(err)}`));
    return this.reconciling;
  }

  private async apply(): Promise<void> {
    const extras = this.deps.registry.getExtras();
    const wanted = new Map(this.active ? extras.subscriptions.map((s) => [s.id, s]) : []);
    for (const id of this.failed.keys()) if (!wanted.has(id)) this.failed.delete(id);
    for (const [id, consumer] of this.consumers) {
      if (wanted.has(id)) continue;
      this.consumers.delete(id);
      await consumer.stop();
      const why = this.active ? 'deleted' : 'moved to another node';
      this.deps.log.info(
        { subscription: id },
        `subscription ${id} ${why}: stopped consuming ${consumer.subscription.source}`,
      );
    }
    for (const s of wanted.values()) {
      if (this.consumers.has(s.id) || this.failed.has(s.id)) continue;
      try {
        const consumer = new SubscriptionConsumer(
          s,
          await openSource(s, extras.kafkaClusters, this.deps.storeRedis),
          this.deps,
        );
        this.consumers.set(s.id, consumer);
        consumer.start();
        this.deps.log.info({ subscription: s.id }, `subscription ${s.id}: consuming ${s.source} into ${s.sink}`);
      } catch (err) {
        this.failed.set(s.id, { subscription: s, reason: String(err) });
        this.deps.log.warn({ subscription: s.id }, `subscription ${s.id} cannot be consumed: ${String(err)}`);
      }
    }
  }
}
