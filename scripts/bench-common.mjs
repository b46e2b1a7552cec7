// What the bench scripts share: their options, starting redstate, waiting for a server to answer.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `--name value` from the command line, else `def`. */
export function option(args, name, def) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
}

export async function waitHttp(url, tries = 300) {
  for (let i = 0; i < tries; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

/**
 * redstate from `root`'s build, as the benchmarks run it (fsync before ack; with `store`
 * `redis`, a fresh redis-server with `appendfsync always` in `dataDir`), on ports 18180/19170.
 * redis-server runs as the server's child (bash starts it, then becomes the server), so the
 * harness's "server" process tree counts both: the server's cost includes its store's.
 * `BENCH_CPU_PROF=<dir>` also writes a CPU profile; `BENCH_SERVER_FLAGS` are node flags for
 * the server alone (e.g. `--max-semi-space-size=4`), to try a setting before making it the default.
 */
export async function startRedstate(root, store, dataDir, extraEnv = {}) {
  const env = {
    ...process.env,
    REDSTATE_INGRESS_PORT: '18180',
    REDSTATE_ADMIN_PORT: '19170',
    REDSTATE_NODE_PORT: '29122',
    REDSTATE_HOST: '127.0.0.1',
    REDSTATE_DATA_DIR: dataDir,
    ...extraEnv,
  };
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const flags = process.env.BENCH_SERVER_FLAGS?.split(' ').filter(Boolean) ?? [];
  const node = [process.execPath, ...profile, ...flags, path.join(root, 'dist/src/main.js')];
  if (store !== 'redis')
    return {
      server: spawn(node[0], node.slice(1), { env, stdio: ['ignore', 'ignore', 'inherit'] }),
      redisPid: undefined,
    };
  env.REDSTATE_REDIS_URL = 'redis://127.0.0.1:16379';
  const pidFile = path.join(dataDir, 'redis.pid');
  const redis = `redis-server --port 16379 --bind 127.0.0.1 --appendonly yes --appendfsync always --save '' --dir '${dataDir}'`;
  const script = `${redis} >/dev/null 2>&1 & echo $! > '${pidFile}'; sleep 0.5; exec ${node.map((a) => `'${a}'`).join(' ')}`;
  const server = spawn('bash', ['-c', script], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  await sleep(600);
  return { server, redisPid: Number(fs.readFileSync(pidFile, 'utf8')) };
}
