/**
 * The retry scheduler (src/runtime/services/retry.ts): failed work is tried again with backoff,
 * and work of a partition goes with the partition: not scheduled once this node does not own
 * it, cancelled when it leaves or is acquired again, not tried again when it failed while
 * being forgotten (its recovery redoes it).
 */
import test from 'ava';
import pino from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { RetryScheduler } from '../../src/runtime/services/retry.js';

const log = pino({ level: 'silent' });

/** A job that fails `failures` times, then succeeds; counts its runs. */
function flaky(failures: number, during?: () => void) {
  const job = {
    runs: 0,
    run: async () => {
      job.runs++;
      during?.();
      if (job.runs <= failures) throw new Error(`failure ${job.runs}`);
    },
  };
  return job;
}

test('a failed job is tried again until it succeeds, and not after', async (t) => {
  const retry = new RetryScheduler(log);
  const job = flaky(1);
  retry.later('k', new Error('first'), job.run, 3);
  // Tries at 100 ms (fails) and 300 ms (succeeds); a third would come at 700 ms.
  await sleep(100 + 200 + 400 + 150);
  t.is(job.runs, 2);
  retry.stop();
});

test('work of a partition this node does not own is not scheduled', async (t) => {
  const retry = new RetryScheduler(log, (p) => p !== 3);
  const job = flaky(0);
  retry.later('k', new Error('failed'), job.run, 3);
  await sleep(200);
  t.is(job.runs, 0);
  retry.stop();
});

test('forgetting a partition cancels its waiting work, and only its', async (t) => {
  const retry = new RetryScheduler(log);
  const mine = flaky(0);
  const other = flaky(0);
  retry.later('mine', new Error('failed'), mine.run, 3);
  retry.later('other', new Error('failed'), other.run, 4);
  retry.forgetPartition(3);
  await sleep(200);
  t.deepEqual([mine.runs, other.runs], [0, 1]);
  retry.stop();
});

test('a job that fails while its partition is forgotten is not tried again', async (t) => {
  const retry = new RetryScheduler(log);
  const job = flaky(5, () => retry.forgetPartition(3));
  retry.later('k', new Error('first'), job.run, 3);
  await sleep(100 + 200 + 400 + 200);
  t.is(job.runs, 1);
  retry.stop();
});

test('a job that failed again is dropped once its partition is no longer owned', async (t) => {
  // Owned at its first try, gone by its second (handed over without a forget reaching it).
  let owned = true;
  const retry = new RetryScheduler(log, () => owned);
  const job = flaky(5, () => (owned = false));
  retry.later('k', new Error('first'), job.run, 3);
  await sleep(100 + 200 + 400 + 200);
  t.is(job.runs, 1);
  retry.stop();
});
