import { mkdtemp, rm, stat } from 'node:fs/promises';
import { closeSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { CommitLog, LOG_BYTES, readCommitLog, type LoggedWrite } from '../../src/store/embedded/commit-log.js';
import type { TableName } from '../../src/store/embedded/tables.js';

async function withLog(run: (path: string) => Promise<void> | void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-commit-log-'));
  try {
    await run(join(dir, 'commit.log'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const group = (writes: Array<[TableName, number, string | null]>): LoggedWrite[] =>
  writes.map(([table, key, value]) => ({
    table,
    key: Buffer.of(key),
    value: value === null ? null : Buffer.from(value),
  }));

const read = (path: string, generation: number) =>
  readCommitLog(path, generation).map(({ table, key, value }) => [table, key[0], value?.toString() ?? null]);

test('groups appended to the log are read back in order, puts and removes, until the zeros after them', async (t) => {
  await withLog(async (path) => {
    const log = CommitLog.open(path, 7);
    t.is((await stat(path)).size, LOG_BYTES);
    log.append(
      group([
        ['state', 1, 'a'],
        ['invocations', 2, 'b'],
      ]),
    );
    log.append(
      group([
        ['state', 1, null],
        ['records', 3, ''],
      ]),
    );
    log.close();
    t.deepEqual(read(path, 7), [
      ['state', 1, 'a'],
      ['invocations', 2, 'b'],
      ['state', 1, null],
      ['records', 3, ''],
    ]);
    t.deepEqual(read(path, 8), [], 'records of another generation are not read');
  });
});

test('after a checkpoint the log starts again: the older records left past the new ones are not read', async (t) => {
  await withLog(async (path) => {
    const log = CommitLog.open(path, 1);
    for (let i = 0; i < 5; i++) log.append(group([['state', i, 'old'.repeat(i + 1)]]));
    log.restart(2);
    log.append(group([['state', 9, 'new']]));
    log.close();
    t.deepEqual(read(path, 2), [['state', 9, 'new']]);
    const reopened = CommitLog.open(path, 2);
    t.is(reopened.size, 0, 'a log opened again writes from its start');
    reopened.close();
  });
});

test('a torn record ends the log: the records before it are read, it and those after are not', async (t) => {
  await withLog(async (path) => {
    const log = CommitLog.open(path, 3);
    log.append(group([['state', 1, 'kept']]));
    const secondAt = log.size;
    log.append(group([['state', 2, 'torn']]));
    log.append(group([['state', 3, 'after']]));
    log.close();
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.from('X'), 0, 1, secondAt + 20); // a byte of the second record's payload
    closeSync(fd);
    t.deepEqual(read(path, 3), [['state', 1, 'kept']]);
  });
});

test('no log file reads as nothing', async (t) => {
  await withLog((path) => {
    t.deepEqual(readCommitLog(path, 1), []);
  });
});

test('records larger than the log and its buffer are written whole, and the small ones after them too', async (t) => {
  await withLog(async (path) => {
    const log = CommitLog.open(path, 4);
    const big = 'b'.repeat(LOG_BYTES + 1);
    log.append(group([['state', 1, 'x'.repeat(100_000)]]));
    log.append(group([['state', 2, big]]));
    log.append(group([['state', 3, 'small']]));
    log.close();
    const read = readCommitLog(path, 4);
    t.deepEqual(
      read.map(({ key, value }) => [key[0], value?.length]),
      [
        [1, 100_000],
        [2, big.length],
        [3, 5],
      ],
    );
    t.is(read[1]!.value!.toString(), big);
  });
});
