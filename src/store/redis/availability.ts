/**
 * Whether Redis can be reached, and what a failed command means for the caller.
 *
 * Commands are only handed to ioredis while its connection is ready; a command issued during
 * an outage waits a moment for the connection to come back, then is refused with
 * `StoreUnavailable` (`mayHaveApplied: false`: it was never sent). A command that fails after
 * it was handed over (the connection broke, no reply in time) may have reached Redis: for a
 * write that is an unknown outcome (`mayHaveApplied: true`). ioredis must therefore never send
 * a command twice or later than asked (see `connectionOptions`).
 */
import type { Redis, RedisOptions } from 'ioredis';
import { StoreUnavailable } from '../types.js';

/** How an outage is reported: once when it starts, once when it ends (with its length). */
export type AvailabilityLog = (event: { available: boolean; message: string; outageMs?: number }) => void;

/** How long a command issued while Redis is unreachable waits for it before it is refused. */
const READY_WAIT_MS = 1000;

/** Redis answered, but cannot serve now (still loading, out of memory, a script running…). */
const NOT_NOW = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY|NOAUTH|OOM|MISCONF|NOREPLICAS)\b/;

const UNAVAILABLE = 'The store is unavailable: Redis cannot be reached. Retry once it is back.';
const UNKNOWN_OUTCOME = 'The store became unavailable while this change was being stored: it may or may not have been applied. Retry once the store is back.';

/** ioredis settings that keep the rule above. */
export const connectionOptions: RedisOptions = {
  // Reconnect forever, a little slower each time, up to every 2 s.
  retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2000),
  // When the connection closes, every command in flight fails at once, rather than being
  // retried after the reconnection, when a later commit may already have landed.
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  enableOfflineQueue: true,
  connectTimeout: 2000,
};

export class RedisAvailability {
  private down: { since: number } | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly location: string,
    private readonly log: AvailabilityLog = () => {},
  ) {
    // Failures reach callers through rejected commands; without a listener ioredis would
    // print every reconnection error.
    redis.on('error', (err: Error) => this.wentDown(err.message));
    redis.on('close', () => this.wentDown('connection closed'));
    redis.on('ready', () => this.cameBack());
  }

  /** Resolves when commands can be sent; throws `StoreUnavailable` if Redis stays unreachable. */
  async ready(): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        reject(new StoreUnavailable(UNAVAILABLE, false));
      }, READY_WAIT_MS);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.redis.once('ready', onReady);
    });
  }

  /**
   * The error to give the caller of a command that failed after it was sent: `StoreUnavailable`
   * for connection failures and refusals, the error itself for anything else (a bug).
   */
  failure(err: unknown, write: boolean): unknown {
    if (err instanceof StoreUnavailable) return err;
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof Error && err.name === 'ReplyError') {
      return NOT_NOW.test(message) ? new StoreUnavailable(`The store is unavailable: Redis refused the command (${message.split(' ')[0]}). Retry later.`, false, { cause: err }) : err;
    }
    return new StoreUnavailable(write ? UNKNOWN_OUTCOME : UNAVAILABLE, write, { cause: err });
  }

  private wentDown(reason: string): void {
    if (this.down || this.redis.status === 'ready') return;
    this.down = { since: Date.now() };
    this.log({ available: false, message: `store unavailable: Redis at ${this.location} cannot be reached (${reason}); requests answer 503 until it is back` });
  }

  private cameBack(): void {
    if (!this.down) return;
    const outageMs = Date.now() - this.down.since;
    this.down = undefined;
    this.log({ available: true, message: `store available again: Redis at ${this.location} answers (down for ${(outageMs / 1000).toFixed(1)} s)`, outageMs });
  }
}
