/**
 * Two redstate nodes over one store, seen by a test as one server (the stack kinds
 * `redis-2nodes` and `redis-cluster-2nodes` of stack.ts): every request a test makes goes to
 * the nodes in turn, so each operation is tried through the node that owns its partition and
 * through the one that forwards it, and a "server" SIGKILL and restart is one of the whole
 * cluster (nothing of either node's memory survives it).
 */
import got, { type Got } from 'got';
import { startRedstate, type RedstateProcess } from './server.js';
import { waitFor } from './wait.js';

/** How many nodes a multi-node stack runs; each owns half of the default 24 partitions. */
export const NODES = 2;

/** A client of the same API on every node, each request to the next node in turn. */
export function roundRobin(bases: string[]): Got {
  let next = 0;
  return got.extend({
    prefixUrl: bases[0]!,
    throwHttpErrors: false,
    retry: { limit: 0 },
    timeout: { request: 60_000 },
    hooks: {
      beforeRequest: [
        (options) => {
          const url = new URL(String(options.url));
          const base = new URL(bases[next++ % bases.length]!);
          url.host = base.host;
          options.url = url;
        },
      ],
    },
  });
}

/** The nodes as one `RedstateProcess`: its URLs are the first node's, signals go to all of them. */
function asOne(nodes: RedstateProcess[], settled: () => Promise<void>): RedstateProcess {
  const first = nodes[0]!;
  const all = async (f: (n: RedstateProcess) => Promise<unknown>) => {
    await Promise.all(nodes.map(f));
  };
  return {
    ingress: first.ingress,
    admin: first.admin,
    node: first.node,
    dataDir: first.dataDir,
    pid: () => first.pid(),
    output: () => nodes.map((n, i) => `--- node ${i + 1} ---\n${n.output()}`).join('\n'),
    kill: () => all((n) => n.kill()),
    signal: (sig) => nodes.forEach((n) => n.signal(sig)),
    async terminate() {
      const codes = await Promise.all(nodes.map((n) => n.terminate()));
      return codes.find((c) => c !== 0) ?? codes[0]!;
    },
    async restart() {
      await all((n) => n.restart());
      await settled();
    },
    async crashAndRestart() {
      await all((n) => n.crashAndRestart());
      await settled();
    },
    stop: () => all((n) => n.stop()),
  };
}

export interface StartedNodes {
  /** The nodes as one server (see `asOne`). */
  server: RedstateProcess;
  /** Each node on its own (to kill one). */
  nodes: RedstateProcess[];
  ingress: Got;
  admin: Got;
  /** Resolves once every partition has an owner and each node owns its share. */
  settled(): Promise<void>;
}

/** `NODES` server processes over the store at `redisUrl`, started one after the other. */
export async function startNodes(redisUrl: string, env: Record<string, string> = {}): Promise<StartedNodes> {
  const nodes: RedstateProcess[] = [];
  for (let i = 1; i <= NODES; i++)
    nodes.push(await startRedstate({ redisUrl, env: { REDSTATE_NODE_ID: `n${i}`, ...env } }));
  const admin = roundRobin(nodes.map((n) => n.admin));
  const settled = async () => {
    await waitFor(async () => {
      const res = await admin.post('query', {
        json: { query: 'SELECT node_id FROM sys_partitions' },
        headers: { accept: 'application/json' },
      });
      if (res.statusCode !== 200) return false;
      const rows = (JSON.parse(res.body) as { rows: Array<{ node_id: string | null }> }).rows;
      const per = new Map<string, number>();
      for (const r of rows) if (r.node_id) per.set(r.node_id, (per.get(r.node_id) ?? 0) + 1);
      return per.size === NODES && [...per.values()].every((c) => c >= Math.floor(rows.length / NODES));
    }, 30_000);
  };
  await settled();
  return {
    server: asOne(nodes, settled),
    nodes,
    ingress: roundRobin(nodes.map((n) => n.ingress)),
    admin,
    settled,
  };
}
