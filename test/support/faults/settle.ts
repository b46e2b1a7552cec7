/**
 * After a round's load and faults: waits, within a bound, for what the checks look at, and
 * collects it: the output of every invocation a client or the service knows of (by id, and by
 * idempotency key) once it has completed; the invocations still not completed when the bound
 * runs out; the answer of one more exclusive call on each key, and each key's count. For a key
 * whose exclusive call gets no answer: the invocations queued behind it, and (Redis store) its
 * lock record.
 */
import type { Response } from 'got';
import pLimit from 'p-limit';
import { setTimeout as delay } from 'node:timers/promises';
import { sqlRows, type Rows, type Stack } from '../stack.js';
import { answer, jsonOf, type Answer } from './answer.js';
import type { Execution } from './executions.js';
import type { Sent } from './load.js';
import { readLockRecords, type LockRecord } from './lock-records.js';
import { KEYS } from './plan.js';

export interface Observed {
  byId: Map<string, Answer>;
  byIdempotencyKey: Map<string, Answer>;
  /** Invocations not completed by `finishBy`: created, acknowledged or not, and still running or queued. */
  unfinished: Rows;
  /** Counter invocations queued behind a lock once all should be done: service_key, id. */
  inbox: Rows;
  /** The last exclusive call on each key (`add` of 0). */
  finalCalls: Map<string, Answer>;
  /** Lock records of the keys whose final call got no answer (Redis store), with the status of each invocation they name. */
  locks: Map<string, (LockRecord & { status: Map<string, string> }) | undefined>;
  /** Each key's count, read by a shared handler after the final calls. */
  counts: Map<string, Answer>;
}

/** How long the final exclusive call on a key may take. */
const FINAL_CALL_MS = 15_000;
/** Output requests in flight at once. */
const OUTPUT_CONCURRENCY = 48;
/** What output answers for an invocation that exists but has not completed (reference-behavior.md §2.6). */
const NOT_COMPLETED = 470;
const POLL_MS = 250;

/**
 * @param boundMs how long outputs are waited for
 * @param finishBy by when every invocation the server created must have completed (60 s after the last fault)
 */
export async function settle(
  stack: Stack,
  sent: Sent[],
  executions: Execution[],
  boundMs: number,
  finishBy: number,
): Promise<Observed> {
  const deadline = Date.now() + boundMs;
  const ids = new Set([
    ...sent.flatMap((s) => (s.invocationId ? [s.invocationId] : [])),
    ...executions.map((e) => e.inv),
  ]);
  const idempotencyKeys = new Set(
    sent.flatMap((s) => (s.op.idempotencyKey !== undefined ? [s.op.idempotencyKey] : [])),
  );
  const [byId, byIdempotencyKey] = await Promise.all([
    outputs(ids, deadline, (id, ms) => stack.ingress.get(`restate/output/${id}`, { timeout: { request: ms } })),
    outputs(idempotencyKeys, deadline, (key, ms) =>
      stack.ingress.post('restate/output', {
        json: { target: 'idempotentInvocation', service: 'Work', handler: 'step', idempotencyKey: key },
        timeout: { request: ms },
      }),
    ),
  ]);
  let unfinished = await stillRunning(stack);
  while (unfinished.length > 0 && Date.now() < finishBy) {
    await delay(POLL_MS);
    unfinished = await stillRunning(stack);
  }
  const inbox = await sqlRows(
    stack.admin,
    `SELECT service_key, id FROM sys_inbox WHERE service_name = 'Counter' ORDER BY service_key, sequence_number`,
  );
  const finalCalls = await mapAll(KEYS, (key) =>
    answer(Date.now() + FINAL_CALL_MS, (ms) =>
      stack.ingress.post(`restate/call/Counter/${key}/add`, {
        json: { op: `final-${key}`, delta: 0, sleepMs: 0 },
        timeout: { request: ms },
      }),
    ),
  );
  const counts = await mapAll(KEYS, (key) =>
    answer(Date.now() + FINAL_CALL_MS, (ms) =>
      stack.ingress.post(`restate/call/Counter/${key}/get`, { timeout: { request: ms } }),
    ),
  );
  const stuck = KEYS.filter((key) => jsonOf(finalCalls.get(key)!) === undefined);
  const redisUrl = stack.redis?.url ?? stack.redisCluster?.url ?? stack.redisSentinel?.url;
  const locks =
    redisUrl && stuck.length > 0
      ? await withStatuses(stack, await readLockRecords(redisUrl, 'Counter', stuck))
      : new Map();
  return { byId, byIdempotencyKey, unfinished, inbox, finalCalls, counts, locks };
}

/** The status of the invocations a lock record names (holder and inbox), as sys_invocation has it. */
async function withStatuses(stack: Stack, records: Map<string, LockRecord | undefined>): Promise<Observed['locks']> {
  const named = [...records.values()].flatMap((r) => (r ? [...(r.holder ? [r.holder] : []), ...r.inbox] : []));
  const rows =
    named.length === 0
      ? []
      : await sqlRows(
          stack.admin,
          `SELECT id, status FROM sys_invocation WHERE id IN (${named.map((h) => `'${h}'`).join(', ')})`,
        );
  const status = new Map(rows.map((r) => [String(r.id), String(r.status)]));
  return new Map([...records].map(([key, r]) => [key, r && { ...r, status }]));
}

/**
 * The output of each invocation (by id, or by idempotency key), asked again until it has
 * completed (the answer is not 470) or the deadline passes. Polling rather than attaching: a
 * few attaches that wait for good behind a stuck key must not hold up all the others.
 */
async function outputs<K>(
  names: Iterable<K>,
  deadline: number,
  ask: (name: K, timeoutMs: number) => Promise<Response<string>>,
): Promise<Map<K, Answer>> {
  const limit = pLimit(OUTPUT_CONCURRENCY);
  const answers = new Map<K, Answer>();
  let pending = [...names];
  for (;;) {
    await Promise.all(
      pending.map((name) => limit(async () => answers.set(name, await answer(deadline, (ms) => ask(name, ms))))),
    );
    pending = pending.filter((name) => {
      const a = answers.get(name)!;
      return 'status' in a && a.status === NOT_COMPLETED;
    });
    if (pending.length === 0 || Date.now() >= deadline) return answers;
    await delay(POLL_MS);
  }
}

function stillRunning(stack: Stack): Promise<Rows> {
  return sqlRows(
    stack.admin,
    `SELECT id, target, status, created_at, modified_at FROM sys_invocation WHERE status <> 'completed' ORDER BY created_at`,
  );
}

async function mapAll<K, V>(keys: Iterable<K>, f: (key: K) => Promise<V>): Promise<Map<K, V>> {
  const list = [...keys];
  const values = await Promise.all(list.map(f));
  return new Map(list.map((k, i) => [k, values[i]!]));
}
