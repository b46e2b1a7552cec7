import test from 'ava';
import { parseRfc3339 } from '../../src/timestamps.js';

test('RFC 3339 timestamps: zones, fractions, and each field checked', (t) => {
  t.is(parseRfc3339('2026-12-01T09:30:00Z'), Date.UTC(2026, 11, 1, 9, 30));
  t.is(parseRfc3339('2026-12-01t10:30:00+01:00'), Date.UTC(2026, 11, 1, 9, 30));
  t.is(parseRfc3339('2026-12-01T04:00:00-05:30'), Date.UTC(2026, 11, 1, 9, 30));
  t.is(parseRfc3339('2026-12-01T09:30:00.123456789Z'), Date.UTC(2026, 11, 1, 9, 30, 0, 123));
  t.is(parseRfc3339('2028-02-29T00:00:00Z'), Date.UTC(2028, 1, 29));
  t.is(parseRfc3339('0050-01-01T00:00:00Z'), new Date('0050-01-01T00:00:00Z').getTime());
  for (const bad of [
    '2026-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-12-01T24:00:00Z',
    '2026-12-01T09:60:00Z',
    '2026-12-01T09:30:00',
    '2026-12-01 09:30:00Z',
    '2026-12-01T09:30:00+24:00',
    '2026-12-01T09:30Z',
    ' 2026-12-01T09:30:00Z',
  ]) {
    t.is(parseRfc3339(bad), undefined, bad);
  }
});
