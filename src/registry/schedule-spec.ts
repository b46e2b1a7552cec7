/**
 * When a schedule fires (issue 26): a cron expression of 5 or 6 fields (seconds first when 6)
 * in an IANA time zone, read and stepped by croner (time zones and DST through `Intl`: a time
 * that a DST change skips fires at the first valid time after the gap, one that occurs twice
 * fires once), or an ISO 8601 repeating interval `R[n]/<start>/<duration>` (a fixed duration:
 * weeks, days, hours, minutes, seconds; a calendar month or year has no fixed length, and is
 * a cron expression's job).
 */
import { Cron } from 'croner';
import { DurationParseError, parseDuration } from './durations.js';
import { parseRfc3339 } from '../timestamps.js';

/** A schedule's timing as stored and shown: `cron` with `timezone`, or `interval`. */
export type ScheduleSpec = { cron: string; timezone: string } | { interval: string };

export class ScheduleSpecError extends Error {}

/** A spec checked and ready to step: the fire times after a moment. */
export interface FireTimes {
  /** The first fire time strictly after `after` (epoch ms), or undefined when there is none left. */
  after(after: number): number | undefined;
}

/** Checks a spec; throws `ScheduleSpecError` with what is wrong. */
export function fireTimesOf(spec: ScheduleSpec): FireTimes {
  return 'cron' in spec ? cronTimes(spec.cron, spec.timezone) : intervalTimes(spec.interval);
}

/** The fire times of a stored schedule (model/schedules.ts: `cron` with `timezone`, or `interval`). */
export function fireTimesOfSchedule(s: { cron?: string; timezone?: string; interval?: string }): FireTimes {
  return fireTimesOf(
    s.cron !== undefined ? { cron: s.cron, timezone: s.timezone ?? 'UTC' } : { interval: s.interval ?? '' },
  );
}

/** The next `n` fire times after `from`. */
export function nextFireTimes(times: FireTimes, from: number, n: number): number[] {
  const out: number[] = [];
  for (let at = times.after(from); at !== undefined && out.length < n; at = times.after(at)) out.push(at);
  return out;
}

function cronTimes(expression: string, timezone: string): FireTimes {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    throw new ScheduleSpecError(
      `a cron expression has 5 fields (minute hour day month weekday) or 6 (seconds first), not ${fields.length}: '${expression}'`,
    );
  }
  if (!validZone(timezone))
    throw new ScheduleSpecError(`unknown time zone '${timezone}': use an IANA name such as Europe/Berlin or UTC`);
  let cron: Cron;
  try {
    cron = new Cron(expression, { timezone, paused: true, mode: '5-or-6-parts' });
  } catch (err) {
    throw new ScheduleSpecError(`bad cron expression '${expression}': ${(err as Error).message}`);
  }
  return { after: (after) => cron.nextRun(new Date(after))?.getTime() };
}

function validZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

const INTERVAL = /^R(\d*)\/([^/]+)\/(P[^/]+)$/;

function intervalTimes(text: string): FireTimes {
  const m = INTERVAL.exec(text.trim());
  if (!m)
    throw new ScheduleSpecError(
      `an interval is R[n]/<start, RFC 3339>/<ISO 8601 duration>, e.g. R/2026-12-01T00:00:00Z/PT15M: '${text}'`,
    );
  const count = m[1] === '' ? undefined : Number(m[1]);
  const start = parseRfc3339(m[2]!);
  if (start === undefined) throw new ScheduleSpecError(`the interval's start is not an RFC 3339 timestamp: '${m[2]}'`);
  let every: number;
  try {
    every = parseDuration(m[3]!);
  } catch (err) {
    if (err instanceof DurationParseError)
      throw new ScheduleSpecError(`the interval's duration '${m[3]}' is not a fixed duration: ${err.message}`);
    throw err;
  }
  if (every < 1000) throw new ScheduleSpecError(`the interval's duration '${m[3]}' is under a second`);
  return {
    after(after) {
      // The first repetition (index 0 is the start) strictly after `after`.
      const index = after < start ? 0 : Math.floor((after - start) / every) + 1;
      if (count !== undefined && index >= count) return undefined;
      return start + index * every;
    },
  };
}
