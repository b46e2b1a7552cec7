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

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Reads an RFC 3339 timestamp (`2026-12-01T09:30:00Z`, `…+01:00`, a fraction down to
 * nanoseconds) as epoch milliseconds; undefined when it is not one. Each field is checked, as
 * `Date.parse` alone would take 30 February for 2 March; a leap second reads as the second
 * after it.
 */
export function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const zone = m[8]!;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 60)
    return undefined;
  if (zone.length > 1 && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(4)) > 59)) return undefined;
  const offsetMs =
    zone.length > 1
      ? (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4))) * 60_000
      : 0;
  const fraction = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
  return utc(year, month, day, hour, minute, second) + fraction - offsetMs;
}

/** Epoch ms of a UTC date and time; unlike `Date.UTC`, a year below 100 is that year, not 1900 + it. */
function utc(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
}

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}
