/**
 * Acknowledged work survives the loss of the primary: a commit is acknowledged only once N
 * replicas have it (`WAIT`; Redis 7.0, as Debian ships it, has no `WAITAOF`). With Sentinel, the
 * replica it promotes then holds every acknowledged commit.
 *
 * One `WAIT` covers every commit handed to ioredis before it on the connection, so the commits
 * of one event-loop turn (one pipeline, one group commit) share one: it is sent at the end of
 * the turn, right behind them. A reply below N means the commit is on the primary but not
 * confirmed anywhere else: `StoreUnavailable` with `mayHaveApplied` (store/confirmed.ts then
 * settles it for the client once enough replicas are back).
 *
 * `auto` (the default) waits for 1 replica while the primary has one online, and for none while
 * it has none (right after a failover, until the old primary is back as a replica): a primary
 * left alone keeps serving, as Redis does. A number waits for that many, always.
 */
import type { Redis } from 'ioredis';
import { StoreUnavailable } from '../types.js';

/** How long a commit waits for its replicas before it counts as not confirmed. */
const WAIT_TIMEOUT_MS = 1_000;
/** How often `auto` looks at how many replicas are online (and at once after a reconnection). */
const WATCH_EVERY_MS = 1_000;

export type ReplicasSetting = number | 'auto';

export class Replication {
  private required: number;
  /** The `WAIT` of this event-loop turn, shared by its commits. */
  private turn: Promise<number> | undefined;
  private watching: NodeJS.Timeout | undefined;

  private constructor(
    private readonly redis: Redis,
    setting: ReplicasSetting,
    private readonly log: (message: string) => void,
    online: number,
  ) {
    this.required = setting === 'auto' ? Math.min(1, online) : setting;
  }

  /** Reads the primary's replicas once; `auto` then follows them. */
  static async start(redis: Redis, setting: ReplicasSetting, log: (message: string) => void): Promise<Replication> {
    const replication = new Replication(redis, setting, log, await onlineReplicas(redis));
    if (setting === 'auto') replication.watch();
    return replication;
  }

  /** Replicas every commit waits for now. */
  get replicas(): number {
    return this.required;
  }

  /**
   * Call right after a commit was handed to ioredis: resolves once the replicas have it (and
   * every write sent before it), rejects with `StoreUnavailable` when fewer confirm in time.
   */
  async confirm(): Promise<void> {
    const required = this.required;
    if (required === 0) return;
    if (!this.turn) {
      this.turn = new Promise<number>((resolve, reject) => {
        setImmediate(() => {
          this.turn = undefined;
          this.redis.wait(required, WAIT_TIMEOUT_MS).then(resolve, reject);
        });
      });
    }
    const confirmed = await this.turn;
    if (confirmed < required) {
      throw new StoreUnavailable(
        `The commit reached the Redis primary, but ${confirmed} of the ${required} replicas it must reach confirmed it within ${WAIT_TIMEOUT_MS} ms. Retry once the replicas are back.`,
        true,
      );
    }
  }

  /**
   * Readiness (`Store.ping`): resolves when the replicas every commit waits for confirm all this
   * connection has written; a client told after an outage that its change landed is then told
   * of a change that survives the primary's loss.
   */
  async ready(): Promise<void> {
    const required = this.required;
    if (required === 0) return;
    const confirmed = await this.redis.wait(required, WAIT_TIMEOUT_MS);
    if (confirmed < required)
      throw new StoreUnavailable(
        `The store is unavailable: ${confirmed} of the ${required} Redis replicas every commit waits for answer. Retry once they are back.`,
        false,
      );
  }

  stop(): void {
    clearInterval(this.watching);
    this.redis.off('ready', this.refresh);
  }

  private watch(): void {
    this.watching = setInterval(this.refresh, WATCH_EVERY_MS);
    this.watching.unref();
    this.redis.on('ready', this.refresh);
  }

  private readonly refresh = (): void => {
    onlineReplicas(this.redis).then(
      (online) => {
        const required = Math.min(1, online);
        if (required === this.required) return;
        this.required = required;
        this.log(
          required > 0
            ? `Redis replication: a replica is online; every commit waits for it before it is acknowledged`
            : `Redis replication: no replica online; commits are acknowledged by the primary alone until one is back`,
        );
      },
      // Unreachable: the outage is reported elsewhere (availability.ts); the next look tells.
      () => undefined,
    );
  };
}

/** Replicas the primary streams to now (`state=online` in INFO replication: not those still syncing). */
async function onlineReplicas(redis: Redis): Promise<number> {
  const info = await redis.info('replication');
  return info.split('\n').filter((line) => /^slave\d+:.*state=online/.test(line)).length;
}
