/**
 * What idle-release.ts gives back besides V8's heap: the resident pages of the embedded store's
 * mapped data file leave this process's RSS (native-memory.ts), and what they hold is read again
 * unchanged; mapped-page-cap.ts drops them without waiting for quiet once they pile up. And how
 * long the idle release's full collections wait: longer after ones that load followed soon,
 * shorter again after one followed by a long quiet.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReleasePacing } from '../../src/idle-release.js';
import { CapPacing, startMappedPageCap } from '../../src/mapped-page-cap.js';
import { nativeMemory } from '../../src/native-memory.js';
import { EmbeddedStore } from '../../src/store/embedded/embedded-store.js';

/** KiB of `file` resident in this process, from /proc/self/smaps. */
function residentKiB(file: string): number {
  let total = 0;
  let inFile = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inFile = line.endsWith(` ${file}`);
    else if (inFile && line.startsWith('Rss:')) total += Number(/(\d+) kB/.exec(line)![1]);
  }
  return total;
}

const BODY = 'x'.repeat(64 * 1024);

/** A store whose data file holds 8 MiB, read once through its map; removed after `use`. */
async function withFilledStore(use: (store: EmbeddedStore, file: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-idle-'));
  const store = await EmbeddedStore.open(dir);
  try {
    await store.commit({
      partition: 0,
      outboxAdd: Array.from({ length: 128 }, (_, i) => ({ id: `m${String(i).padStart(3, '0')}`, body: BODY })),
    });
    // Reads go through the map once the commit is in LMDB: at the commit log's next checkpoint (50 ms).
    await new Promise((resolve) => setTimeout(resolve, 200));
    await use(store, store.info.mappedFiles![0]!);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test('the mapped data file leaves the RSS; its contents are read again unchanged', async (t) => {
  await withFilledStore(async (store, file) => {
    t.is((await store.outbox(0)).length, 128);
    const before = residentKiB(file);
    t.true(before > 4096, `${before} KiB resident after reading 8 MiB`);

    nativeMemory()!.dropMappedPages([file]);
    const after = residentKiB(file);
    t.true(after < before / 4, `${before} → ${after} KiB`);
    const again = await store.outbox(0);
    t.is(again.length, 128);
    t.true(again.every((m) => m.body === BODY));
  });
});

test('the mapped pages are dropped once they pass the cap, busy or not', async (t) => {
  await withFilledStore(async (store, file) => {
    const cap = startMappedPageCap([file], { everyMs: 20, capBytes: 4 * 2 ** 20 });
    try {
      t.is((await store.outbox(0)).length, 128);
      const read = residentKiB(file);
      t.true(read > 4096, `${read} KiB resident after reading 8 MiB`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const after = residentKiB(file);
      t.true(after < read / 4, `${read} → ${after} KiB`);
    } finally {
      cap.stop();
    }
  });
});

test('drops that come back within a second double the cap, up to 64 MiB; ten quiet seconds halve it', (t) => {
  const MiB = 2 ** 20;
  const pacing = new CapPacing(32 * MiB);
  const caps: number[] = [];
  let now = 0;
  for (const gap of [5_000, 400, 400, 2_000, 11_000, 11_000]) {
    now += gap;
    pacing.dropped(now);
    caps.push(pacing.bytes / MiB);
  }
  t.deepEqual(caps, [32, 64, 64, 64, 32, 32]);
});

test('a collection that load followed within a minute makes the next wait twice as long, up to 8 minutes', (t) => {
  const pacing = new ReleasePacing();
  t.is(pacing.quietChecks, 60);
  pacing.busy(1_000); // load without a collection before it changes nothing
  t.is(pacing.quietChecks, 60);
  let now = 0;
  const waits: number[] = [];
  for (let i = 0; i < 5; i++) {
    pacing.released(now);
    now += 30_000;
    pacing.busy(now);
    pacing.busy(now + 1_000); // the rest of the burst counts once
    waits.push(pacing.quietChecks);
  }
  t.deepEqual(waits, [120, 240, 480, 480, 480]);
});

test('a collection followed by a long quiet makes the next wait half as long, down to a minute', (t) => {
  const pacing = new ReleasePacing();
  let now = 0;
  for (let i = 0; i < 3; i++) {
    pacing.released(now);
    pacing.busy((now += 5_000));
  }
  t.is(pacing.quietChecks, 480);
  const waits: number[] = [];
  for (let i = 0; i < 4; i++) {
    pacing.released(now);
    pacing.busy((now += 90_000));
    waits.push(pacing.quietChecks);
  }
  t.deepEqual(waits, [240, 120, 60, 60]);
});
