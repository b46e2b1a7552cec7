/**
 * The add load of the cluster tests (issue 13), whatever store the nodes share: adds to 50
 * Counter keys (objects.mjs), each sent through a random node, and the check that every
 * acknowledged one completed, each key counts exactly what was acknowledged and exclusive
 * handlers of a key never overlapped.
 */
import type { ExecutionContext } from 'ava';
import type { ClusterNodeHandle, ClusterStack } from './cluster.js';

export const KEYS = Array.from({ length: 50 }, (_, i) => `k${i}`);

/** Loads run while this holds; a failed test clears it (`endLoads`) so that its load ends with it. */
let loadRunning = true;

/** Why the last send was not acknowledged, for failure messages. */
let refusal = '';

export function endLoads(): void {
  loadRunning = false;
}

export const lastRefusal = (): string => refusal;

/** Sends one add to `key` through a random node; the invocation id once acknowledged, else undefined. */
export async function sendAdd(
  stack: ClusterStack,
  key: string,
  live?: ClusterNodeHandle[],
): Promise<string | undefined> {
  const res = await stack
    .any(live)
    .ingress.post(`restate/send/Counter/${key}/add`, { json: { delta: 1, pauseMs: 5 } })
    .catch((err: Error) => {
      refusal = err.message;
      return undefined;
    });
  if (res?.statusCode === 202) return (JSON.parse(res.body) as { invocationId: string }).invocationId;
  if (res) refusal = `${res.statusCode} ${res.body}`;
  return undefined;
}

/**
 * Adds to every key, round after round, each through a random node of `via(round)`, until
 * `stop` (or a failed test calls `endLoads`): what was acknowledged per key, and how many
 * sends per key were not.
 */
export function addLoad(stack: ClusterStack, via: (round: number) => ClusterNodeHandle[]) {
  const acked = new Map<string, string[]>(KEYS.map((k) => [k, []]));
  const unknown = new Map<string, number>(KEYS.map((k) => [k, 0]));
  let rounds = 0;
  loadRunning = true;
  const running = (async () => {
    while (loadRunning) {
      await Promise.all(
        KEYS.map(async (key) => {
          const id = await sendAdd(stack, key, via(rounds));
          if (id) acked.get(key)!.push(id);
          else unknown.set(key, unknown.get(key)! + 1);
        }),
      );
      rounds++;
    }
  })();
  return {
    acked,
    unknown,
    rounds: () => rounds,
    stop: async () => {
      loadRunning = false;
      await running;
    },
  };
}

/**
 * Every acknowledged add completed (attached through random live nodes), each key counts what
 * was acknowledged (plus at most the unknown), no overlaps, no key stuck. Stale attempts (an
 * 'enter' step run again after its invocation ended, objects.mjs) only where a node was paused
 * mid-write: at most `stalePerKey` a key.
 */
export async function checkAdds(
  t: ExecutionContext,
  stack: ClusterStack,
  acked: Map<string, string[]>,
  unknown: Map<string, number>,
  live: ClusterNodeHandle[],
  stalePerKey = 0,
) {
  for (const key of KEYS) {
    const ids = acked.get(key)!;
    const done = await Promise.all(ids.map((id) => stack.any(live).ingress.get(`restate/attach/${id}`)));
    t.deepEqual(
      done.map((r) => r.statusCode),
      ids.map(() => 200),
      key,
    );
    const after = await stack.any(live).ingress.post(`restate/call/Counter/${key}/add`, { json: { delta: 0 } });
    t.is(after.statusCode, 200, `${key} stays locked`);
    const count = Number(after.body);
    const extra = unknown.get(key) ?? 0;
    t.true(
      count >= ids.length && count <= ids.length + extra,
      `${key}: count ${count}, acknowledged ${ids.length}, unknown ${extra}`,
    );
  }
  const c = await stack.counts();
  for (const key of KEYS) t.is(c[`overlaps:${key}`], undefined, `two exclusive handlers of ${key} ran at once`);
  for (const key of KEYS)
    t.true((c[`stale:${key}`] ?? 0) <= stalePerKey, `${key}: ${c[`stale:${key}`]} stale attempts ran a step again`);
}
