/**
 * The production store: Redis through ioredis. One Lua script per commit
 * (`lua/commit-transition.lua`) makes a transition atomic; auto-pipelining sends the commits
 * that become ready in one event-loop turn as one pipeline, which is our group commit: with
 * `appendfsync always` Redis fsyncs once per event-loop iteration, before replying to any of
 * them (design.md, "Store").
 *
 * On a Redis Cluster (connect.ts) every command and every commit names keys of one slot (a
 * partition's hash tag, or the global one: keys.ts); only loading the script, the durability
 * check and the ping concern the whole cluster, and run on every master.
 */
import { settledWithin } from '../../settled-within.js';
import type { ConnectionOptions } from 'node:tls';
import type { Redis } from 'ioredis';
import {
  bytesOf,
  checkJournalIndex,
  checkTransition,
  conflictMessage,
  decodeEntry,
  decodeJson,
  encodeJson,
  recordConflictMessage,
  sortedUtf8,
} from '../codec.js';
import {
  TransitionConflict,
  type HistoryEntry,
  type JournalEntry,
  type OutboxMessage,
  type Store,
  type StoreInfo,
  type Timer,
  type Transition,
} from '../types.js';
import { commitArgs, type ScriptArg } from './commit-args.js';
import { connectionOptions, RedisAvailability, type AvailabilityLog } from './availability.js';
import { storeMetrics, type StoreMetrics } from '../../telemetry/metrics.js';
import { checkDurability } from './durability.js';
import { createRedisClient, isCluster, masters, type RedisClient } from './connect.js';
import { parseRedisUrl, withoutPassword } from '../../redis-url.js';
import { legacyRegistryKey, partitionKeys, registryKey } from './keys.js';
import { readLuaScript } from './scripts.js';
import { Tenure } from '../tenure.js';
import { RedisCoordination, type CoordinatedRedis } from './coordination.js';
import { Replication, type ReplicasSetting } from './replication.js';

export interface RedisStoreOptions {
  /**
   * A command without a reply after this many ms fails, so a Redis that hangs without closing
   * the connection is reported instead of stalling the runtime. Default 15 000.
   */
  commandTimeout?: number;
  /** TLS settings for `rediss://` URLs beyond the system's trust store (a private CA, a client certificate). */
  tls?: ConnectionOptions;
  /** Told when Redis becomes unreachable and when it is back. */
  onAvailability?: AvailabilityLog;
  /** Replicas each commit waits for (replication.ts); default `auto`. Not on a Redis Cluster. */
  waitReplicas?: ReplicasSetting;
  /** Told how many replicas commits wait for, at start and whenever `auto` changes it. */
  onReplication?: (message: string) => void;
}

/**
 * 0 when applied; [1-based append index, journal length found] or ['record', 1-based
 * expectation index] on a conflict; ['fenced', the partition's epoch] when fenced off.
 */
type CommitReply = 0 | [number, number] | ['record', number] | ['fenced', number];

type ScriptedRedis = CoordinatedRedis & {
  commitTransition(numKeys: number, keys: string[], args: ScriptArg[]): Promise<CommitReply>;
};

/** The replicas commits wait for: none on a Redis Cluster, where a number is refused. */
async function replicationOf(
  redis: RedisClient,
  url: string,
  options: RedisStoreOptions,
): Promise<Replication | undefined> {
  const setting = options.waitReplicas ?? 'auto';
  if (isCluster(redis)) {
    if (setting !== 'auto' && setting > 0)
      throw new Error(
        'REDSTATE_REDIS_WAIT_REPLICAS applies to one Redis or a Sentinel primary, not to a Redis Cluster',
      );
    return undefined;
  }
  const replication = await Replication.start(
    redis,
    setting,
    (message) => options.onReplication?.(message),
    parseRedisUrl(url).kind === 'sentinel',
  );
  options.onReplication?.(
    replication.replicas > 0
      ? `Redis replication: every commit waits for ${replication.replicas} replica(s) before it is acknowledged`
      : `Redis replication: commits are acknowledged by the primary alone${setting === 'auto' ? ' (no replica online)' : ''}`,
  );
  return replication;
}

/** How long `ping` waits for PONG before the store counts as unavailable. */
const PING_TIMEOUT_MS = 1000;

export class RedisStore implements Store {
  /** Commits handed to ioredis in the current event-loop turn: one pipeline, one group commit. */
  private groupSize = 0;
  private readonly tenure = new Tenure();
  readonly coordination: RedisCoordination;

  private constructor(
    private readonly redis: ScriptedRedis,
    private readonly availability: RedisAvailability,
    readonly info: StoreInfo,
    private readonly metrics: StoreMetrics,
    /** Undefined on a Redis Cluster. */
    private readonly replication: Replication | undefined,
  ) {
    this.coordination = new RedisCoordination(redis, (write, command) => this.send(write, command), this.tenure);
  }

  static async open(url: string, options: RedisStoreOptions = {}): Promise<RedisStore> {
    const redis = createRedisClient(url, {
      ...connectionOptions,
      lazyConnect: true,
      enableAutoPipelining: true,
      // A cluster's auto-pipelines are grouped by the first argument of a command ioredis does
      // not know, which for a script is its key count: a script would join another master's
      // pipeline and be refused. Sent alone, it goes to its keys' master (EVALSHA's first key).
      ...(parseRedisUrl(url).kind === 'cluster'
        ? { autoPipeliningIgnoredCommands: ['commitTransition', 'leaseOp', 'nodesOp'] }
        : {}),
      commandTimeout: options.commandTimeout ?? 15_000,
      ...(options.tls ? { tls: options.tls } : {}),
    }) as ScriptedRedis;
    // Until the store is open, failures reach the caller of `open`, named by the connection
    // error behind them (ioredis itself only says "Connection is closed.").
    let connectionError: Error | undefined;
    // A cluster's own error ("Failed to refresh slots cache") carries a node's behind it. A
    // node's "Connection is closed." says less than the error of `connect` itself.
    const remember = (err: Error) => {
      if (err.message !== 'Connection is closed.') connectionError = err;
    };
    redis.on('error', (err: Error & { lastNodeError?: Error }) => remember(err.lastNodeError ?? err));
    redis.on('node error', remember);
    const location = withoutPassword(url);
    try {
      await redis.connect();
      const lua = readLuaScript('commit-transition.lua');
      redis.defineCommand('commitTransition', { lua });
      // Loading up front surfaces a script that Redis refuses (e.g. a Redis older than 7.0
      // does not accept the shebang) at startup rather than at the first commit.
      // A cluster's masters each load it: EVALSHA runs on the master of the commit's slot.
      await Promise.all(masters(redis).map((node) => node.script('LOAD', lua)));
      const warnings = await checkDurability(masters(redis));
      for (const [name, file] of [
        ['leaseOp', 'lease.lua'],
        ['nodesOp', 'nodes.lua'],
      ] as const)
        redis.defineCommand(name, { lua: readLuaScript(file) });
      const metrics = storeMetrics('redis');
      const log: AvailabilityLog = (event) => {
        metrics.connected.set(event.available ? 1 : 0);
        options.onAvailability?.(event);
      };
      const availability = new RedisAvailability(
        redis,
        location,
        log,
        isCluster(redis) ? () => pingMasters(redis) : undefined,
      );
      metrics.connected.set(1);
      const replication = await replicationOf(redis, url, options);
      return new RedisStore(redis, availability, { backend: 'redis', location, warnings }, metrics, replication);
    } catch (err) {
      redis.disconnect();
      throw new Error(`cannot use Redis at ${location}: ${(connectionError ?? (err as Error)).message}`, {
        cause: err,
      });
    }
  }

  async commit(t: Transition): Promise<void> {
    checkTransition(t);
    const epoch = this.tenure.epochFor(t.partition);
    const { keys, args } = commitArgs(t, epoch);
    const lapsed = this.tenure.confirmation(t.partition);
    if (lapsed) await lapsed;
    const started = performance.now();
    this.countInGroup();
    let replicated: Promise<void> = Promise.resolve();
    const sent = this.send(true, () => {
      const reply = this.redis.commitTransition(keys.length, keys, args);
      // Right behind the script on the same connection: the WAIT covers it (replication.ts).
      replicated = this.replication?.confirm() ?? replicated;
      return reply;
    });
    // The WAIT's outcome is awaited even when the script failed, so that it never goes unhandled.
    const reply = await this.tenure.track(
      t.partition,
      sent.finally(() => replicated.catch(() => undefined)),
    );
    await replicated.catch((err: unknown) => {
      throw this.availability.failure(err, true);
    });
    this.metrics.commitDuration.observe((performance.now() - started) / 1000);
    if (Array.isArray(reply)) {
      if (reply[0] === 'fenced') throw this.tenure.refusedByStore(t.partition, epoch, reply[1]);
      throw new TransitionConflict(
        reply[0] === 'record' ? recordConflictMessage(t, reply[1] - 1) : conflictMessage(t, reply[0] - 1, reply[1]),
      );
    }
  }

  private countInGroup(): void {
    if (this.groupSize++ > 0) return;
    setImmediate(() => {
      this.metrics.groupCommitSize.observe(this.groupSize);
      this.groupSize = 0;
    });
  }

  async ping(): Promise<void> {
    await this.read(async () => {
      await settledWithin(
        pingMasters(this.redis).then(() => this.replication?.ready()),
        PING_TIMEOUT_MS,
        () => {
          throw new Error(`no PONG within ${PING_TIMEOUT_MS} ms`);
        },
      );
    });
  }

  /** Sends one command once Redis is reachable; failures become `StoreUnavailable` (availability.ts). */
  private async send<T>(write: boolean, command: () => Promise<T>): Promise<T> {
    await this.availability.ready();
    try {
      return await command();
    } catch (err) {
      throw this.availability.failure(err, write);
    }
  }

  private read<T>(command: () => Promise<T>): Promise<T> {
    return this.send(false, command);
  }

  async loadInvocation(partition: number, id: string): Promise<unknown | undefined> {
    const text = await this.read(() => this.redis.get(partitionKeys(partition).snapshot(id)));
    return text === null ? undefined : decodeJson(text);
  }

  async listInvocations(partition: number): Promise<string[]> {
    return sortedUtf8(await this.read(() => this.redis.smembers(partitionKeys(partition).invocations)));
  }

  async activeInvocations(partition: number): Promise<string[]> {
    return sortedUtf8(await this.read(() => this.redis.smembers(partitionKeys(partition).active)));
  }

  async readJournal(partition: number, id: string, from = 0): Promise<JournalEntry[]> {
    checkJournalIndex(from);
    const stored = await this.read(() => this.redis.lrangeBuffer(partitionKeys(partition).journal(id), from, -1));
    return stored.map(decodeEntry);
  }

  async journalLength(partition: number, id: string): Promise<number> {
    return this.read(() => this.redis.llen(partitionKeys(partition).journal(id)));
  }

  async readHistory(partition: number, id: string): Promise<HistoryEntry[]> {
    const stored = await this.redis.lrange(partitionKeys(partition).history(id), 0, -1);
    return stored.map((json) => decodeJson(json) as HistoryEntry);
  }

  async readState(partition: number, service: string, key: string): Promise<Map<string, Uint8Array>> {
    const hash = await this.read(() => this.redis.hgetallBuffer(partitionKeys(partition).state(service, key)));
    const state = new Map<string, Uint8Array>();
    for (const [field, value] of Object.entries(hash)) state.set(field, bytesOf(value));
    return state;
  }

  async readStateKey(
    partition: number,
    service: string,
    key: string,
    stateKey: string,
  ): Promise<Uint8Array | undefined> {
    const value = await this.read(() => this.redis.hgetBuffer(partitionKeys(partition).state(service, key), stateKey));
    return value === null ? undefined : bytesOf(value);
  }

  async dueTimers(partition: number, upTo: number, limit: number): Promise<Timer[]> {
    if (limit <= 0) return [];
    const flat = await this.read(() =>
      this.redis.zrangebyscore(partitionKeys(partition).timers, '-inf', upTo, 'WITHSCORES', 'LIMIT', 0, limit),
    );
    return timersOf(flat);
  }

  async nextTimer(partition: number): Promise<Timer | undefined> {
    return timersOf(await this.read(() => this.redis.zrange(partitionKeys(partition).timers, 0, 0, 'WITHSCORES')))[0];
  }

  async outbox(partition: number): Promise<OutboxMessage[]> {
    const hash = await this.read(() => this.redis.hgetall(partitionKeys(partition).outbox));
    return sortedUtf8(Object.keys(hash)).map((id) => ({ id, body: decodeJson(hash[id]!) }));
  }

  async getRecord(partition: number, kind: string, key: string): Promise<unknown | undefined> {
    const text = await this.read(() => this.redis.hget(partitionKeys(partition).records(kind), key));
    return text === null ? undefined : decodeJson(text);
  }

  async listRecords(partition: number, kind: string): Promise<string[]> {
    return sortedUtf8(await this.read(() => this.redis.hkeys(partitionKeys(partition).records(kind))));
  }

  async loadRegistry(): Promise<unknown | undefined> {
    const text =
      (await this.read(() => this.redis.get(registryKey))) ??
      (await this.read(() => this.redis.get(legacyRegistryKey)));
    return text === null ? undefined : decodeJson(text);
  }

  async saveRegistry(doc: unknown): Promise<void> {
    const text = encodeJson(doc, 'registry');
    await this.send(true, () => this.redis.set(registryKey, text));
  }

  async close(): Promise<void> {
    this.availability.stop();
    this.replication?.stop();
    // QUIT waits for the replies of commands already sent; when Redis is unreachable there
    // is nothing to wait for.
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}

/** PONG from every master; a cluster with one master away is unavailable. */
async function pingMasters(redis: RedisClient): Promise<void> {
  await Promise.all(masters(redis).map((node: Redis) => node.ping()));
}

function timersOf(flat: string[]): Timer[] {
  const timers: Timer[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) timers.push({ key: flat[i]!, dueAt: Number(flat[i + 1]) });
  return timers;
}
