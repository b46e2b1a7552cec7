/**
 * The three ways Restate prints a point in time, each part of some wire contract. They differ
 * only in the fraction and the zone suffix; all are UTC.
 */

/** `2026-11-22T01:40:32.248000000Z`: nanoseconds, as the admin API and `send`'s `executionTime` print (reference §2.3). */
export function rfc3339Nanos(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

/** `2026-11-22T01:40:53.537Z`, and no fraction on a whole second: chrono's `AutoSi`, as `/query` prints (reference §3.6). */
export function rfc3339Auto(ms: number): string {
  const iso = new Date(ms).toISOString();
  return ms % 1000 === 0 ? iso.replace('.000Z', 'Z') : iso;
}

/** `2026-11-23T01:42:50.006+00:00`, milliseconds only when not zero: `idempotency-expires` (reference §2.5). */
export function rfc3339Offset(ms: number): string {
  const iso = new Date(ms).toISOString();
  return (iso.endsWith('.000Z') ? iso.slice(0, -5) : iso.slice(0, -1)) + '+00:00';
}
