/**
 * One process per data directory. The embedded store is one node's alone (LMDB would let a
 * second process write beside the first), and with Redis the directory keeps the node id that
 * lets a restarted node take its own leases back at once.
 *
 * The owner holds an advisory lock on `redstate.lock` (Linux: an open-file-description lock,
 * through fs-native-extensions) on a file it keeps open for its whole life. The kernel drops
 * the lock when the process dies, however it dies, so a crash leaves nothing to clean up; a
 * pid in a file cannot say as much (a killed process not yet reaped still answers `kill(pid, 0)`,
 * and so does an unrelated process that got the pid later). The file's content, the owner's
 * pid, is only there to name it in the refusal.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { tryLock, unlock } from 'fs-native-extensions';

const LOCK = 'redstate.lock';
const NODE_ID = 'node-id';

/**
 * How long a start waits for the lock before it refuses. A SIGKILLed owner keeps its lock
 * until the kernel has torn the process down: 20–150 ms measured for a 2 GB Node process on
 * this 2-core machine, more for a bigger heap on a busy one; a supervisor that restarts at
 * once must not be refused for that. A live owner is refused after this wait.
 */
const LOCK_WAIT_MS = 5_000;
const LOCK_POLL_MS = 20;

export interface ClaimedDataDir {
  /** The configured node id, else the one kept in the directory (generated on first use). */
  nodeId: string;
  release(): void;
}

export class DataDirInUse extends Error {}

export async function claimDataDir(dir: string, configuredNodeId: string | undefined): Promise<ClaimedDataDir> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, LOCK);
  // Never deleted: a process that opened the file just before another deleted it would lock a
  // file nobody else sees.
  const fd = openSync(file, 'a+');
  try {
    const deadline = Date.now() + LOCK_WAIT_MS;
    while (!tryLock(fd)) {
      if (Date.now() >= deadline) {
        const owner = readFileSync(file, 'utf8').trim() || 'unknown';
        throw new DataDirInUse(
          `the data dir ${dir} is in use by another redstate process (pid ${owner}): each process needs its own --data-dir; the embedded store serves one node only, several nodes share a Redis (REDSTATE_REDIS_URL)`,
        );
      }
      await delay(LOCK_POLL_MS);
    }
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  ftruncateSync(fd);
  writeSync(fd, String(process.pid));
  return {
    nodeId: configuredNodeId ?? keptNodeId(dir),
    release: () => {
      unlock(fd);
      closeSync(fd);
    },
  };
}

function keptNodeId(dir: string): string {
  const file = join(dir, NODE_ID);
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept) return kept;
  } catch {
    // None yet.
  }
  const id = `${hostname()}-${randomBytes(4).toString('hex')}`;
  writeFileSync(file, `${id}\n`);
  return id;
}
