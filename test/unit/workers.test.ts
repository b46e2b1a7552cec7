/** When a dead worker starts again (src/workers.ts `restartDelay`). */
import test from 'ava';
import { restartDelay } from '../../src/workers.js';

test('a worker that ran a while starts again after 100 ms', (t) => {
  t.is(restartDelay(undefined, 50), 100);
  t.is(restartDelay(6_400, 60_000), 100);
});

test('one that keeps dying at once waits twice as long each time, up to 10 s', (t) => {
  const delays: number[] = [];
  let last: number | undefined;
  for (let i = 0; i < 10; i++) delays.push((last = restartDelay(last, 20)));
  t.deepEqual(delays, [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000]);
});
