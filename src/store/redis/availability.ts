/**
 * Whether Redis can be reached, and what a failed command means for the caller.
 *
 * Commands are only handed to ioredis while its connection is ready; a command issued during
 * an outage waits a moment for the connection to come back, then is refused with
 * `StoreUnavailable` (`mayHaveApplied: false`: it was never sent). A command that fails after
 * it was handed over (the connection broke, no reply in time) may have reached Redis: for a
 * write that is an unknown outcome (`mayHaveApplied: true`). ioredis must therefore never send
 * a command twice or later than asked (see `connectionOptions`).
 *
 * A Redis Cluster stays "ready" while one of its masters is away: commands for that master's
 * slots fail (and, once the others notice, every command is refused with CLUSTERDOWN). The
 * outage is then noticed from a node's error or a failed command, and over when every master
 * answers a ping (`probe`).
 */
import { settledWithin } from '../../settled-within.js';
import type { RedisOptions } from 'ioredis';
import { StoreUnavailable } from '../types.js';
import { isCluster, type RedisClient } from './connect.js';

/** How an outage is reported: once when it starts, once when it ends (with its length). */
export type AvailabilityLog = (event: { available: boolean; message: string; outageMs?: number }) => void;

/** While a cluster master is away, how often every master is pinged to see whether all are back. */
const PROBE_EVERY_MS = 500;

/** How long a command issued while Redis is unreachable waits for it before it is refused. */
const READY_WAIT_MS = 1000;

/**
 * Redis answered, but cannot serve now (still loading, out of memory, a script running…). On a
 * cluster, MOVED and ASK reach us when ioredis could not follow them (a command auto-pipelined
 * with others for a master that went away): the command did not run there either.
 */
const NOT_NOW = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY|NOAUTH|OOM|MISCONF|NOREPLICAS|MOVED|ASK)\b/;

const UNAVAILABLE = 'The store is unavailable: Redis cannot be reached. Retry once it is back.';
const UNKNOWN_OUTCOME =
  'The store became unavailable while this change was being stored: it may or may not have been applied. Retry once the store is back.';

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
  private probing: NodeJS.Timeout | undefined;

  /** Resolves at the next 'ready' of the connection (`ready`). */
  private nextReady: Promise<void> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly location: string,
    private readonly log: AvailabilityLog = () => {},
    /** Resolves when every master answers; for a cluster only. */
    private readonly probe?: () => Promise<void>,
  ) {
    // Failures reach callers through rejected commands; without a listener ioredis would
    // print every reconnection error.
    redis.on('error', (err: Error) => this.wentDown(err.message));
    redis.on('close', () => this.wentDown('connection closed'));
    redis.on('ready', () => this.cameBack());
    if (isCluster(redis))
      redis.on('node error', (err: Error, node: string) => this.masterDown(`${node}: ${err.message}`));
  }

  /** Resolves when commands can be sent; throws `StoreUnavailable` if Redis stays unreachable. */
  async ready(): Promise<void> {
    if (this.redis.status === 'ready') return;
    // One listener for every waiter: one each passed Node's 10 and printed a non-JSON warning
    // (MaxListenersExceededWarning) into the log at each outage under load.
    this.nextReady ??= new Promise<void>((resolve) =>
      this.redis.once('ready', () => {
        this.nextReady = undefined;
        resolve();
      }),
    );
    await settledWithin(this.nextReady, READY_WAIT_MS, () => {
      throw new StoreUnavailable(UNAVAILABLE, false);
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
      if (!NOT_NOW.test(message)) return err;
      this.masterDown(message);
      return new StoreUnavailable(
        `The store is unavailable: Redis refused the command (${message.split(' ')[0]}). Retry later.`,
        false,
        { cause: err },
      );
    }
    // ioredis gave up following a cluster's refusals, the last one a refusal too: no attempt
    // ran, since one whose connection closed is never tried again (connect.ts).
    const refusals = /^Too many Cluster redirections\. Last error: ReplyError: (CLUSTERDOWN|TRYAGAIN|MOVED|ASK)\b/.exec(
      message,
    );
    if (refusals) {
      this.masterDown(message);
      return new StoreUnavailable(
        `The store is unavailable: Redis Cluster refused the command (${refusals[1]}). Retry later.`,
        false,
        { cause: err },
      );
    }
    this.masterDown(message);
    return new StoreUnavailable(write ? UNKNOWN_OUTCOME : UNAVAILABLE, write, { cause: err });
  }

  /** A cluster master is away (or refuses) while the cluster client stays ready: probe until all answer. */
  private masterDown(reason: string): void {
    if (!this.probe || this.probing) return;
    this.wentDown(reason, true);
    const probe = this.probe;
    const again = () => {
      this.probing = setTimeout(() => {
        probe().then(() => {
          this.probing = undefined;
          this.cameBack();
        }, again);
      }, PROBE_EVERY_MS);
      this.probing.unref();
    };
    again();
  }

  /** No more probing once the client is closed. */
  stop(): void {
    clearTimeout(this.probing);
  }

  private wentDown(reason: string, whileReady = false): void {
    if (this.down || (this.redis.status === 'ready' && !whileReady)) return;
    this.down = { since: Date.now() };
    this.log({
      available: false,
      message: `store unavailable: Redis at ${this.location} cannot be reached (${reason}); requests answer 503 until it is back`,
    });
  }

  private cameBack(): void {
    if (!this.down) return;
    const outageMs = Date.now() - this.down.since;
    this.down = undefined;
    this.log({
      available: true,
      message: `store available again: Redis at ${this.location} answers (down for ${(outageMs / 1000).toFixed(1)} s)`,
      outageMs,
    });
  }
}
