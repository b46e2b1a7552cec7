/** When schedules fire (src/registry/schedule-spec.ts): cron in time zones across DST, with croner; ISO 8601 repeating intervals; bad specs. */
import test from 'ava';
import { fireTimesOf, nextFireTimes, ScheduleSpecError } from '../../src/registry/schedule-spec.js';

const next = (spec: Parameters<typeof fireTimesOf>[0], from: string, n: number) =>
  nextFireTimes(fireTimesOf(spec), Date.parse(from), n).map((t) => new Date(t).toISOString());

test('cron with seconds, and in a time zone', (t) => {
  t.deepEqual(next({ cron: '*/2 * * * * *', timezone: 'UTC' }, '2026-12-01T10:00:00.500Z', 3), [
    '2026-12-01T10:00:02.000Z',
    '2026-12-01T10:00:04.000Z',
    '2026-12-01T10:00:06.000Z',
  ]);
  // 09:00 in Berlin is 08:00 UTC in winter, 07:00 in summer.
  t.deepEqual(next({ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' }, '2026-12-04T00:00:00Z', 2), [
    '2026-12-04T08:00:00.000Z',
    '2026-12-07T08:00:00.000Z',
  ]);
  t.deepEqual(next({ cron: '0 9 * * *', timezone: 'America/New_York' }, '2026-07-01T00:00:00Z', 1), [
    '2026-07-01T13:00:00.000Z',
  ]);
});

test('DST in Europe/Berlin: a skipped local time fires at the first time after the gap, a repeated one once; */15 keeps real intervals', (t) => {
  // 2026-03-29: 02:00 → 03:00. 02:30 does not exist that night.
  t.deepEqual(next({ cron: '30 2 * * *', timezone: 'Europe/Berlin' }, '2026-03-27T12:00:00Z', 4), [
    '2026-03-28T01:30:00.000Z',
    '2026-03-29T01:00:00.000Z',
    '2026-03-30T00:30:00.000Z',
    '2026-03-31T00:30:00.000Z',
  ]);
  // 2026-10-25: 03:00 → 02:00. 02:30 happens twice, the schedule fires once.
  t.deepEqual(next({ cron: '30 2 * * *', timezone: 'Europe/Berlin' }, '2026-10-23T12:00:00Z', 3), [
    '2026-10-24T00:30:00.000Z',
    '2026-10-25T00:30:00.000Z',
    '2026-10-26T01:30:00.000Z',
  ]);
  const quarter = next({ cron: '*/15 * * * *', timezone: 'Europe/Berlin' }, '2026-10-25T00:20:00Z', 6);
  t.deepEqual(quarter, [
    '2026-10-25T00:30:00.000Z',
    '2026-10-25T00:45:00.000Z',
    '2026-10-25T01:00:00.000Z',
    '2026-10-25T01:15:00.000Z',
    '2026-10-25T01:30:00.000Z',
    '2026-10-25T01:45:00.000Z',
  ]);
});

test('ISO 8601 repeating intervals: unbounded and R<n>, from their start', (t) => {
  t.deepEqual(next({ interval: 'R/2026-12-01T00:00:00Z/PT15M' }, '2026-11-01T00:00:00Z', 2), [
    '2026-12-01T00:00:00.000Z',
    '2026-12-01T00:15:00.000Z',
  ]);
  t.deepEqual(next({ interval: 'R/2026-12-01T00:00:00Z/PT15M' }, '2026-12-01T00:20:00Z', 1), [
    '2026-12-01T00:30:00.000Z',
  ]);
  t.deepEqual(next({ interval: 'R3/2026-12-01T00:00:00+01:00/P1D' }, '2026-11-01T00:00:00Z', 5), [
    '2026-11-30T23:00:00.000Z',
    '2026-12-01T23:00:00.000Z',
    '2026-12-02T23:00:00.000Z',
  ]);
});

test('bad specs say what is wrong', (t) => {
  const bad = (spec: Parameters<typeof fireTimesOf>[0]) =>
    t.throws(() => fireTimesOf(spec), { instanceOf: ScheduleSpecError })?.message;
  t.regex(bad({ cron: '* * * *', timezone: 'UTC' })!, /has 5 fields .* or 6 .*, not 4/);
  t.regex(bad({ cron: '* * * * * * *', timezone: 'UTC' })!, /not 7/);
  t.regex(bad({ cron: '61 * * * *', timezone: 'UTC' })!, /^bad cron expression '61 \* \* \* \*'/);
  t.is(
    bad({ cron: '0 * * * *', timezone: 'Mars/Olympus' }),
    "unknown time zone 'Mars/Olympus': use an IANA name such as Europe/Berlin or UTC",
  );
  t.regex(bad({ interval: 'every 5 minutes' })!, /^an interval is R\[n\]/);
  t.regex(bad({ interval: 'R/2026-12-01/PT1M' })!, /start is not an RFC 3339 timestamp/);
  t.regex(bad({ interval: 'R/2026-12-01T00:00:00Z/P1M' })!, /calendar units/);
  t.regex(bad({ interval: 'R/2026-12-01T00:00:00Z/PT0.5S' })!, /under a second/);
});
