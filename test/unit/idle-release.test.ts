/**
 * What idle-release.ts gives back besides V8's heap: the resident pages of the embedded store's
 * mapped data file leave this process's RSS, and what they hold is read again unchanged.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeRelease } from '../../src/idle-release.js';
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

test('the mapped data file leaves the RSS; its contents are read again unchanged', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-idle-'));
  const store = await EmbeddedStore.open(dir);
  try {
    const [file] = store.info.mappedFiles!;
    const body = 'x'.repeat(64 * 1024);
    await store.commit({
      partition: 0,
      outboxAdd: Array.from({ length: 128 }, (_, i) => ({ id: `m${String(i).padStart(3, '0')}`, body })),
    });
    t.is((await store.outbox(0)).length, 128);
    const before = residentKiB(file!);
    t.true(before > 4096, `${before} KiB resident after reading 8 MiB`);

    nativeRelease([file!])();
    const after = residentKiB(file!);
    t.true(after < before / 4, `${before} → ${after} KiB`);
    const again = await store.outbox(0);
    t.is(again.length, 128);
    t.true(again.every((m) => m.body === body));
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
