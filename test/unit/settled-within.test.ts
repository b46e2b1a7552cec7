/**
 * settled-within.ts: a bound gives the work's outcome or late()'s, and an answer that arrived
 * while the process was not scheduled still wins over the timer that expired meanwhile.
 */
import test from 'ava';
import { stat } from 'node:fs';
import { settledWithin } from '../../src/settled-within.js';

function blockFor(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

test('work that settles in time wins; work that does not gives late() its say', async (t) => {
  t.is(await settledWithin(Promise.resolve('work'), 10, () => 'late'), 'work');
  t.is(await settledWithin(new Promise<string>(() => {}), 10, () => 'late'), 'late');
  await t.throwsAsync(
    settledWithin(new Promise<string>(() => {}), 10, () => {
      throw new Error('too slow');
    }),
    { message: 'too slow' },
  );
});

test('an answer that arrived while the process was not running beats the timer that expired meanwhile', async (t) => {
  // The stat completes on the thread pool while this thread is blocked past the bound: on
  // waking, the expired timer is due before the completion is read.
  const work = new Promise<string>((resolve) => stat('.', () => resolve('work')));
  const bounded = settledWithin(work, 5, () => 'late');
  blockFor(100);
  t.is(await bounded, 'work');
});
