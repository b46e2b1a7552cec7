/**
 * One process per data directory. The embedded store is one node's alone (LMDB would let a
 * second process write beside the first), and with Redis the directory keeps the node id that
 * lets a restarted node take its own leases back at once. A lock file holds the owner's pid: a
 * live owner refuses the start, a dead one (a crash) leaves a stale file that is taken over.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, closeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

const LOCK = 'redstate.lock';
const NODE_ID = 'node-id';

export interface ClaimedDataDir {
  /** The configured node id, else the one kept in the directory (generated on first use). */
  nodeId: string;
  release(): void;
}

export class DataDirInUse extends Error {}

export function claimDataDir(dir: string, configuredNodeId: string | undefined): ClaimedDataDir {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, LOCK);
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const owner = Number(readFileSync(lock, 'utf8').trim());
      if (owner !== process.pid && alive(owner)) {
        throw new DataDirInUse(
          `the data dir ${dir} is in use by another redstate process (pid ${owner}): each process needs its own --data-dir; the embedded store serves one node only, several nodes share a Redis (REDSTATE_REDIS_URL)`,
        );
      }
      unlinkSync(lock);
    }
  }
  return {
    nodeId: configuredNodeId ?? keptNodeId(dir),
    release: () => {
      try {
        unlinkSync(lock);
      } catch {
        // Gone already: nothing to release.
      }
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

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
