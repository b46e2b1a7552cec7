/**
 * Turns ioredis's connection events into one log line when an outage starts and one when it
 * ends, and keeps `redstate_store_connected` in step. ioredis reconnects by itself and commands
 * issued meanwhile fail (redis-store.ts), so these two lines are what an operator sees of it.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../telemetry/log.js';

export function watchOutages(redis: Redis, log: Logger, connected: { set(value: number): void }): void {
  let ready = false;
  let outageSince: number | undefined;
  let lastError: string | undefined;
  // Failures reach callers through rejected commands; without a listener ioredis would print
  // every reconnection error.
  redis.on('error', (err: Error) => {
    lastError = err.message;
  });
  // ioredis emits `reconnecting` only for a connection it did not close on purpose (quit and
  // disconnect end without it); before the first `ready`, a failure is the start's to report.
  redis.on('reconnecting', () => {
    if (!ready || outageSince !== undefined) return;
    outageSince = Date.now();
    connected.set(0);
    log.warn({ reason: lastError ?? 'connection closed' }, 'store unreachable: connection to Redis lost, reconnecting');
  });
  redis.on('ready', () => {
    ready = true;
    lastError = undefined;
    connected.set(1);
    if (outageSince === undefined) return;
    log.info({ outage_ms: Date.now() - outageSince }, 'store reachable again: reconnected to Redis');
    outageSince = undefined;
  });
}
