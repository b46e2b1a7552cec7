/**
 * What an invocation actor and its attempts need from the runtime around them. One interface,
 * so hosts and attempts never reach for globals and tests can see the whole surface.
 */
import type { Config } from '../config.js';
import type { Registry } from '../registry/registry.js';
import type { Transport } from '../protocol/transport.js';
import type { OutboxMessage, Store, Timer } from '../store/types.js';
import type { InvocationHost } from './invocation-host.js';
import type { ObjectLocks } from './object-locks.js';
import type { PromiseQueues } from './promises.js';
import type { Logger } from '../telemetry/log.js';

/** pino, from src/telemetry/log.ts: `log.child(invocationFields(id, target))` for Restate's fields. */
export type { Logger };

export interface RuntimeServices {
  readonly store: Store;
  readonly registry: Registry;
  readonly transport: Transport;
  readonly config: Config;
  readonly log: Logger;
  now(): number;
  /** Durable timers were committed: arm them in process. */
  readonly timers: { added(partition: number, timers: Timer[]): void };
  /** The lock actors of virtual-object keys and workflow ids. */
  readonly locks: ObjectLocks;
  /** Serialises promise changes per workflow id. */
  readonly promises: PromiseQueues;
  /** The invocation entered `pending`: queue it for its key's lock. */
  requestLock(host: InvocationHost): void;
  /** The invocation got its key's lock in a committed change: let it run. */
  grantLock(invocationId: string): void;
  /** A stored Attach command waits for its target: answer it when the target completes. */
  watchAttach(callerId: string, completionId: number, targetId: string): void;
  /** Outbox messages were committed: deliver them. */
  deliver(partition: number, messages: OutboxMessage[]): void;
  /** The invocation completed (committed): answer whoever waits for it. */
  completed(host: InvocationHost): void;
  /** A commit failed: the actor is dropped and must be rebuilt from the store. */
  lost(host: InvocationHost, err: unknown): void;
}
