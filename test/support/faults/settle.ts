/**
 * After a round's load and faults: waits, within a bound, for what the checks look at, and
 * collects it. Every invocation a client or the service knows of is attached (by id, and each
 * idempotency key by its key), the invocations still running are listed, one more exclusive
 * call is made on each key, and each key's count is read. For a key whose exclusive call gets
 * no answer: the invocations queued behind it, and (Redis store) its lock record.
 */
import pLimit from 'p-limit';
import { query, type Rows, type Stack } from '../stack.js';
import { answer, okJson, type Answer } from './answer.js';
import type { Execution } from './executions.js';
import type { Sent } from './load.js';
import { readLockRecords, type LockRecord } from './lock-records.js';
import { KEYS } from './plan.js';

export interface Observed {
  byId: Map<string, Answer>;
  byIdempotencyKey: Map<string, Answer>;
  /** Invocations not completed when the bound ran out. */
  unfinished: Rows;
  /** Counter invocations queued behind a lock once all should be done: service_key, id. */
  inbox: Rows;
  /** The last exclusive call on each key (`add` of 0). */
  finalCalls: Map<string, Answer>;
  /** Lock records of the keys whose final call got no answer (Redis store), with the holder's status. */
  locks: Map<string, (LockRecord & { holderStatus: string | undefined }) | undefined>;
  /** Each key's count, read by a shared handler after the final calls. */
  counts: Map<string, Answer>;
}

/** How long the final exclusive call on a key may take. */
const FINAL_CALL_MS = 15_000;
const POLL_MS = 250;

export async function settle(stack: Stack, sent: Sent[], executions: Execution[], boundMs: number): Promise<Observed> {
  const deadline = Date.now() + boundMs;
  const limit = pLimit(48);
  const ids = new Set([...sent.flatMap((s) => (s.invocationId ? [s.invocationId] : [])), ...executions.map((e) => e.inv)]);
  const idempotencyKeys = new Set(sent.flatMap((s) => (s.op.idempotencyKey !== undefined ? [s.op.idempotencyKey] : [])));
  const [byId, byIdempotencyKey] = await Promise.all([
    mapAll(ids, (id) => limit(() => answer(deadline, (ms) => stack.ingress.get(`restate/attach/${id}`, { timeout: { request: ms } })))),
    mapAll(idempotencyKeys, (key) =>
      limit(() =>
        answer(deadline, (ms) =>
          stack.ingress.post('restate/attach', {
            json: { target: 'idempotentInvocation', service: 'Work', handler: 'step', idempotencyKey: key },
            timeout: { request: ms },
          }),
        ),
      ),
    ),
  ]);
  let unfinished = await stillRunning(stack);
  while (unfinished.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    unfinished = await stillRunning(stack);
  }
  const inbox = await query(stack, `SELECT service_key, id FROM sys_inbox WHERE service_name = 'Counter' ORDER BY service_key, sequence_number`);
  const finalCalls = await mapAll(KEYS, (key) =>
    answer(Date.now() + FINAL_CALL_MS, (ms) =>
      stack.ingress.post(`restate/call/Counter/${key}/add`, { json: { op: `final-${key}`, delta: 0, sleepMs: 0 }, timeout: { request: ms } }),
    ),
  );
  const counts = await mapAll(KEYS, (key) =>
    answer(Date.now() + FINAL_CALL_MS, (ms) => stack.ingress.post(`restate/call/Counter/${key}/get`, { timeout: { request: ms } })),
  );
  const stuck = KEYS.filter((key) => okJson(finalCalls.get(key)!) === undefined);
  const locks = stack.redis && stuck.length > 0 ? await withHolderStatus(stack, await readLockRecords(stack.redis.url, 'Counter', stuck)) : new Map();
  return { byId, byIdempotencyKey, unfinished, inbox, finalCalls, counts, locks };
}

async function withHolderStatus(stack: Stack, records: Map<string, LockRecord | undefined>): Promise<Observed['locks']> {
  const holders = [...records.values()].flatMap((r) => (r?.holder ? [r.holder] : []));
  const rows = holders.length === 0 ? [] : await query(stack, `SELECT id, status FROM sys_invocation WHERE id IN (${holders.map((h) => `'${h}'`).join(', ')})`);
  const status = new Map(rows.map((r) => [String(r.id), String(r.status)]));
  return new Map([...records].map(([key, r]) => [key, r && { ...r, holderStatus: r.holder ? status.get(r.holder) : undefined }]));
}

function stillRunning(stack: Stack): Promise<Rows> {
  return query(stack, `SELECT id, target, status, created_at, modified_at FROM sys_invocation WHERE status <> 'completed' ORDER BY created_at`);
}

async function mapAll<K, V>(keys: Iterable<K>, f: (key: K) => Promise<V>): Promise<Map<K, V>> {
  const list = [...keys];
  const values = await Promise.all(list.map(f));
  return new Map(list.map((k, i) => [k, values[i]!]));
}
