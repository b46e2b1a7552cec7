/**
 * A throwaway Redis Cluster for tests: three masters (startRedis: free loopback ports, own
 * directories, AOF with fsync always) with `--cluster-enabled yes`, joined by
 * `redis-cli --cluster create` without replicas. A master halted and resumed comes back on the
 * same port and directory, so its AOF and nodes.conf give it back its data and its slots.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startRedis, type RunningRedis } from './redis.js';

const run = promisify(execFile);

export interface RunningRedisCluster {
  /** `redis-cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3` */
  url: string;
  masters: RunningRedis[];
  /** Resolves when every master reports `cluster_state:ok`. */
  waitOk(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface StartRedisClusterOptions {
  masters?: number;
  /**
   * How long (ms) masters wait before they mark an unreachable master failed and refuse
   * everything with CLUSTERDOWN. Default 2000 (Redis: 15 000), so outage tests go through it.
   */
  nodeTimeoutMs?: number;
  /** Sets `requirepass` (and `masterauth`) on every master; the url then carries it. */
  password?: string;
}

export async function startRedisCluster(opts: StartRedisClusterOptions = {}): Promise<RunningRedisCluster> {
  const args = [
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(opts.nodeTimeoutMs ?? 2000),
  ];
  const auth = opts.password === undefined ? [] : ['-a', opts.password, '--no-auth-warning'];
  const masters = await Promise.all(
    Array.from({ length: opts.masters ?? 3 }, () =>
      startRedis({
        args: [...args, ...(opts.password === undefined ? [] : ['--masterauth', opts.password])],
        ...(opts.password === undefined ? {} : { password: opts.password }),
      }),
    ),
  );
  const credentials = opts.password === undefined ? '' : `:${encodeURIComponent(opts.password)}@`;
  const cluster: RunningRedisCluster = {
    url: `redis-cluster://${credentials}${masters.map((m) => `127.0.0.1:${m.port}`).join(',')}`,
    masters,
    async waitOk(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const states = await Promise.all(masters.map((m) => clusterState(m.port, auth)));
        if (states.every((s) => s === 'ok')) return;
        if (Date.now() > deadline) throw new Error(`Redis Cluster not ok within ${timeoutMs} ms: ${states.join(', ')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      await Promise.all(masters.map((m) => m.stop()));
    },
  };
  try {
    await run(
      'redis-cli',
      [
        ...auth,
        '--cluster',
        'create',
        ...masters.map((m) => `127.0.0.1:${m.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
    await cluster.waitOk();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

async function clusterState(port: number, auth: string[]): Promise<string> {
  try {
    const { stdout } = await run('redis-cli', [...auth, '-p', String(port), 'cluster', 'info'], { timeout: 5000 });
    return /cluster_state:(\w+)/.exec(stdout)?.[1] ?? 'unknown';
  } catch {
    return 'unreachable';
  }
}
