/**
 * When a dead worker starts again (src/workers.ts `restartDelay`), and a server alone on the
 * embedded store's files waiting for the workers of a killed primary (`awaitWorkersGone`).
 */
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimDataDir } from '../../src/data-dir.js';
import { awaitWorkersGone, restartDelay } from '../../src/workers.js';

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

test('a server alone on the files starts only once no worker holds its directory', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'redstate-workers-'));
  try {
    await awaitWorkersGone(dataDir);
    const worker = await claimDataDir(join(dataDir, 'worker-1'), undefined);
    let gone = false;
    const waiting = awaitWorkersGone(dataDir).then(() => (gone = true));
    await new Promise((r) => setTimeout(r, 200));
    t.false(gone, 'the worker still lives');
    worker.release();
    await waiting;
    t.true(gone);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
