/**
 * Durations as Restate writes and reads them.
 *
 * Output is the "friendly" compact form the admin API prints (`1d`, `10m`, `500ms`,
 * `1h 30m`; reference-behavior.md §3.3). Input is either that friendly form, with long unit
 * names and spaces allowed (`1 hour`, `2h`, `1h, 30 mins`), or ISO 8601 (`PT30S`, `P1DT2H`),
 * as the admin API's PATCH /services (§3.4) and the ingress `?delay=` accept.
 */

const MS = {
  week: 7 * 86_400_000,
  day: 86_400_000,
  hour: 3_600_000,
  minute: 60_000,
  second: 1_000,
  milli: 1,
  micro: 1e-3,
  nano: 1e-6,
} as const;

type Unit = keyof typeof MS;

/** Unit names of the friendly format, as jiff (Restate's time library) spells them. */
const designators: Record<string, Unit | 'calendar'> = {};
function names(unit: Unit | 'calendar', ...list: string[]): void {
  for (const n of list) designators[n] = unit;
}
names('calendar', 'y', 'yr', 'yrs', 'year', 'years', 'mo', 'mos', 'month', 'months');
names('week', 'w', 'wk', 'wks', 'week', 'weeks');
names('day', 'd', 'day', 'days');
names('hour', 'h', 'hr', 'hrs', 'hour', 'hours');
names('minute', 'm', 'min', 'mins', 'minute', 'minutes');
names('second', 's', 'sec', 'secs', 'second', 'seconds');
names('milli', 'ms', 'msec', 'msecs', 'millisecond', 'milliseconds');
names('micro', 'µs', 'us', 'usec', 'usecs', 'microsecond', 'microseconds');
names('nano', 'ns', 'nsec', 'nsecs', 'nanosecond', 'nanoseconds');

export class DurationParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurationParseError';
  }
}

/** Parses a friendly or ISO 8601 duration into milliseconds (sub-millisecond parts are dropped). */
export function parseDuration(text: string): number {
  const input = text.trim();
  const ms = /^[+-]?p/i.test(input) ? parseIso(input) : parseFriendly(input);
  return Math.floor(ms + 1e-9);
}

function friendlyError(detail: string): DurationParseError {
  return new DurationParseError(`failed to parse input in the "friendly" duration format: ${detail}`);
}

function parseFriendly(input: string): number {
  let rest = input;
  let negative = false;
  if (rest.startsWith('+') || rest.startsWith('-')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1).trimStart();
  }
  let total = 0;
  let units = 0;
  let sawFraction = false;
  while (rest.length > 0) {
    if (units > 0 && /^ago$/i.test(rest)) {
      negative = !negative;
      break;
    }
    const value = /^(\d+)(?:\.(\d+))?/.exec(rest);
    if (!value) {
      if (units === 0) {
        throw friendlyError(
          'expected duration to start with a unit value (a decimal integer) after an optional sign, but no integer was found',
        );
      }
      throw friendlyError(
        `expected to find a unit value (a decimal integer), but found input beginning with "${rest}" instead`,
      );
    }
    if (sawFraction) throw friendlyError('a fractional unit value must be the last unit of the duration');
    rest = rest.slice(value[0].length).trimStart();
    const designator = /^[a-zA-Zµ]+/.exec(rest)?.[0];
    const unit = designator === undefined ? undefined : designators[designator.toLowerCase()];
    if (unit === undefined) {
      const found = rest === '' ? 'the end of input' : `input beginning with "${rest}"`;
      throw friendlyError(
        `expected to find unit designator suffix (e.g., 'years' or 'secs'), but found ${found} instead`,
      );
    }
    if (unit === 'calendar')
      throw friendlyError(`calendar unit '${designator}' has no fixed length and cannot be used here`);
    if (value[2] !== undefined) {
      if (unit === 'week' || unit === 'day') throw friendlyError(`fractional ${unit}s are not allowed`);
      sawFraction = true;
    }
    total += Number(value[0]) * MS[unit];
    units++;
    rest = rest.slice(designator!.length).replace(/^[\s,]+/, '');
  }
  if (units === 0) {
    throw friendlyError(
      'expected duration to start with a unit value (a decimal integer) after an optional sign, but no integer was found',
    );
  }
  if (negative && total > 0) throw friendlyError('negative durations are not supported');
  return total;
}

function parseIso(input: string): number {
  const m =
    /^([+-]?)P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/i.exec(
      input,
    );
  const fail = () => new DurationParseError(`failed to parse "${input}" as an ISO 8601 duration`);
  if (!m || input.toUpperCase().endsWith('T') || /^[+-]?P$/i.test(input)) throw fail();
  const [, sign, years, months, weeks, days, hours, minutes, seconds] = m;
  if (years || months)
    throw new DurationParseError(
      `ISO 8601 duration "${input}" uses calendar units (years or months), which have no fixed length`,
    );
  const num = (s: string | undefined) => (s === undefined ? 0 : Number(s.replace(',', '.')));
  // ISO 8601 allows a fraction only on the smallest unit written.
  const parts = [hours, minutes, seconds].filter((p) => p !== undefined);
  if (parts.slice(0, -1).some((p) => /[.,]/.test(p!))) throw fail();
  const total =
    num(weeks) * MS.week +
    num(days) * MS.day +
    num(hours) * MS.hour +
    num(minutes) * MS.minute +
    num(seconds) * MS.second;
  if (sign === '-' && total > 0) throw new DurationParseError('negative durations are not supported');
  return total;
}

const printed: Array<[Unit, string]> = [
  ['day', 'd'],
  ['hour', 'h'],
  ['minute', 'm'],
  ['second', 's'],
  ['milli', 'ms'],
];

/** Formats milliseconds the way the admin API prints durations: `1d`, `1h 30m`, `500ms`, `0s`. */
export function formatDuration(ms: number): string {
  let rest = Math.max(0, Math.round(ms));
  if (rest === 0) return '0s';
  const parts: string[] = [];
  for (const [unit, suffix] of printed) {
    const n = Math.floor(rest / MS[unit]);
    if (n > 0) parts.push(`${n}${suffix}`);
    rest -= n * MS[unit];
  }
  return parts.join(' ');
}
