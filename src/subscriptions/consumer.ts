/**
 * One subscription at work: read a batch from its source, turn each message into an
 * invocation of the sink handler, and acknowledge the batch only once every one of those
 * invocations is stored. A crash anywhere in between makes the source deliver the batch again;
 * the invocations' deterministic ids (invocation-request.ts) make the second delivery create
 * nothing.
 *
 * Order: creations are serialised per virtual-object key (or workflow id) and, for a plain
 * service, per stream, in the order the source handed the messages out. A key's invocations
 * then run in creation order because each takes its place in the key's inbox in its creating
 * commit (runtime/services/invocations.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Registry } from '../registry/registry.js';
import { parseSink, type Subscription } from '../registry/extras.js';
import type { EffectiveHandler } from '../registry/types.js';
import { KeyedSerialQueue } from '../serial-queue.js';
import type { CompletedInvocation } from '../model/persisted.js';
import type { InvokeRequest, InvokeResult, Logger } from '../runtime/types.js';
import { InFlight } from './in-flight.js';
import { invocationRequestOf, objectKeyOf } from './invocation-request.js';
import { Progress } from './progress.js';
import type { MessageSource, SourceMessage } from './source.js';

/** What the engine needs of the runtime (runtime.ts). */
export interface SinkRuntime {
  invoke(req: InvokeRequest, handler?: EffectiveHandler): Promise<InvokeResult>;
  attach(id: string): Promise<CompletedInvocation | undefined>;
}

export interface ConsumerDeps {
  registry: Pick<Registry, 'resolveHandler'>;
  runtime: SinkRuntime;
  log: Logger;
  /** Invocations of one subscription created and not yet completed, at most. */
  maxInFlight: number;
}

const STOP_WAIT_MS = 3000;

/** 100 ms, doubling, at most 5 s: a broker or store outage is waited out, not spun on. */
const backoff = (failures: number) => Math.min(5_000, 100 * 2 ** Math.min(failures, 6));

export class SubscriptionConsumer {
  readonly progress = new Progress();
  private readonly stopping = new AbortController();
  private readonly ordered = new KeyedSerialQueue();
  private readonly inFlight: InFlight;
  private readonly sink: { service: string; handler: string };
  private running: Promise<void> = Promise.resolve();

  constructor(
    readonly subscription: Subscription,
    private readonly source: MessageSource,
    private readonly deps: ConsumerDeps,
  ) {
    this.inFlight = new InFlight(deps.maxInFlight);
    this.sink = parseSink(subscription.sink);
  }

  get inFlightCount(): number {
    return this.inFlight.count;
  }

  start(): void {
    this.running = this.consume();
  }

  /** The broker's count, or undefined when it does not answer within a second (a `/query` must not hang on a broker). */
  lag(): Promise<number | undefined> {
    const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1000).unref());
    return Promise.race([this.source.lag().catch(() => undefined), timeout]);
  }

  /**
   * Stops reading; what was read and not acknowledged is delivered again to the next consumer.
   * A broker that does not answer (it is down while the server stops) holds the stop for
   * STOP_WAIT_MS at most: nothing unacknowledged is lost by not waiting longer.
   */
  async stop(): Promise<void> {
    this.stopping.abort(new Error(`subscription ${this.subscription.id} stopped`));
    const stopped = Promise.all([this.source.close(), this.running]).then(() => true);
    const waited = sleep(STOP_WAIT_MS, false, { ref: false });
    if (!(await Promise.race([stopped, waited]))) {
      this.deps.log.warn(
        { subscription: this.subscription.id },
        `subscription ${this.subscription.id}: its source did not stop within ${STOP_WAIT_MS} ms; left behind`,
      );
    }
  }

  private async consume(): Promise<void> {
    const signal = this.stopping.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const batch = await this.source.next(signal);
        if (batch.length === 0) continue;
        await Promise.all(batch.map((m) => this.ordered.run(this.orderOf(m), () => this.create(m, signal))));
        await this.source.ack(batch);
        this.progress.acknowledged(batch, Date.now());
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        this.progress.failed(err);
        this.deps.log.warn(
          { subscription: this.subscription.id, err: String(err) },
          `subscription ${this.subscription.id}: ${String(err)}; reading again from the first unacknowledged message`,
        );
        this.source.rewind();
        await sleep(backoff(failures++), undefined, { signal }).catch(() => undefined);
      }
    }
  }

  private handler(): EffectiveHandler | undefined {
    return this.deps.registry.resolveHandler(this.sink.service, this.sink.handler);
  }

  /** Per key for keyed sinks, per stream for services (and while the sink is unknown). */
  private orderOf(m: SourceMessage): string {
    const handler = this.handler();
    const key = handler ? objectKeyOf(handler, m) : undefined;
    return key !== undefined ? `key:${key}` : `stream:${m.stream}`;
  }

  /** Creates the message's invocation, trying again until it is stored or the subscription stops. */
  private async create(m: SourceMessage, signal: AbortSignal): Promise<void> {
    await this.inFlight.acquire(signal);
    for (let failures = 0; ; failures++) {
      try {
        const handler = this.handler();
        if (!handler) throw new Error(`the sink ${this.subscription.sink} is not registered`);
        const { invocationId } = await this.deps.runtime.invoke(
          invocationRequestOf(this.subscription.id, handler, m),
          handler,
        );
        // The slot stays taken until the invocation completes: that is the back-pressure.
        void this.deps.runtime
          .attach(invocationId)
          .catch(() => undefined)
          .finally(() => this.inFlight.release());
        return;
      } catch (err) {
        if (signal.aborted) {
          this.inFlight.release();
          throw err;
        }
        this.progress.failed(err);
        this.deps.log.warn(
          { subscription: this.subscription.id, err: String(err) },
          `subscription ${this.subscription.id}: creating the invocation of ${m.stream}/${m.position} failed: ${String(err)}`,
        );
        const waited = await sleep(backoff(failures), true, { signal }).catch(() => false);
        if (!waited) {
          this.inFlight.release();
          throw err;
        }
      }
    }
  }
}
