import test from 'ava';
import { DurationParseError, formatDuration, parseDuration } from '../../src/registry/durations.js';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

test('formatDuration prints the admin API friendly form', (t) => {
  // reference-behavior.md §3.3: `1d`, `1m`, `10m`, `500ms`, `2h`, `30s`, `1h`, `3d`.
  const cases: Array<[number, string]> = [
    [D, '1d'],
    [M, '1m'],
    [10 * M, '10m'],
    [500, '500ms'],
    [2 * H, '2h'],
    [30 * S, '30s'],
    [H, '1h'],
    [3 * D, '3d'],
    [0, '0s'],
    [H + 30 * M, '1h 30m'],
    [D + 2 * H + 3 * M + 4 * S + 5, '1d 2h 3m 4s 5ms'],
    [14 * D, '14d'],
  ];
  for (const [ms, text] of cases) t.is(formatDuration(ms), text, `${ms} ms`);
});

test('parseDuration reads the friendly form', (t) => {
  const cases: Array<[string, number]> = [
    ['1d', D],
    ['10m', 10 * M],
    ['500ms', 500],
    ['2h', 2 * H],
    ['1 hour', H],
    ['1h 30m', H + 30 * M],
    ['1h30m', H + 30 * M],
    ['1 hour, 30 mins', H + 30 * M],
    ['2 days 1 second', 2 * D + S],
    ['1w', 7 * D],
    ['1.5s', 1_500],
    ['  45 secs ', 45 * S],
    ['0s', 0],
    ['250 milliseconds', 250],
    ['3000us', 3],
  ];
  for (const [text, ms] of cases) t.is(parseDuration(text), ms, text);
});

test('parseDuration reads ISO 8601', (t) => {
  const cases: Array<[string, number]> = [
    ['PT30S', 30 * S],
    ['pt30s', 30 * S],
    ['P1D', D],
    ['P1DT2H', D + 2 * H],
    ['PT1H30M', H + 30 * M],
    ['PT0.5S', 500],
    ['P2W', 14 * D],
    ['PT1M30.25S', M + 30_250],
  ];
  for (const [text, ms] of cases) t.is(parseDuration(text), ms, text);
});

test('parseDuration round-trips what formatDuration prints', (t) => {
  for (const ms of [0, 1, 999, S, 61 * S, H + 1, D + H + M + S + 1, 30 * D])
    t.is(parseDuration(formatDuration(ms)), ms);
});

test('parseDuration refuses malformed input with jiff-like messages', (t) => {
  // The text of §3.4's 422 for `"bogus"`.
  const bogus = t.throws(() => parseDuration('bogus'), { instanceOf: DurationParseError });
  t.is(
    bogus?.message,
    'failed to parse input in the "friendly" duration format: expected duration to start with a unit value (a decimal integer) after an optional sign, but no integer was found',
  );
  for (const text of [
    '',
    '1',
    '1x',
    '5 parsecs',
    '1h 30',
    '1 month',
    '2y',
    '-1h',
    'P',
    'PT',
    'P1Y',
    'PT1.5H30M',
    'P1DT',
  ]) {
    t.throws(() => parseDuration(text), { instanceOf: DurationParseError }, JSON.stringify(text));
  }
});
