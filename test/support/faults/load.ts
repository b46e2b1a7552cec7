/**
 * Runs a round's operations against the ingress, `concurrency` at a time, and records what each
 * one's client learned: acknowledged (a call answered 200 with its result, a send 202 with its
 * invocation id) or not (an error, a reset, a timeout: the outcome is unknown).
 */
import type { Got } from 'got';
import pLimit from 'p-limit';
import { setTimeout as delay } from 'node:timers/promises';
import { answer, describe, jsonOf } from './answer.js';
import type { Op } from './plan.js';

export interface Sent {
  op: Op;
  acked: boolean;
  invocationId?: string;
  /** What an acknowledged call answered. */
  result?: unknown;
  /** Why it is not acknowledged. */
  error?: string;
}

/** How long one operation may take before its outcome counts as unknown. */
const OP_TIMEOUT_MS = 30_000;
/**
 * After a failure a worker waits a little: while a process is down, every request fails at once,
 * and without a pause the load would be spent on the outage instead of running across it.
 */
const PAUSE_AFTER_FAILURE_MS = 100;

export async function runLoad(ingress: Got, plan: Op[], concurrency: number, onStart: (op: Op) => void): Promise<Sent[]> {
  return pLimit(concurrency).map(plan, async (op) => {
    onStart(op);
    const sent = await send(ingress, op);
    if (!sent.acked) await delay(PAUSE_AFTER_FAILURE_MS);
    return sent;
  });
}

async function send(ingress: Got, op: Op): Promise<Sent> {
  const headers = op.idempotencyKey === undefined ? {} : { 'idempotency-key': op.idempotencyKey };
  const a = await answer(Date.now() + OP_TIMEOUT_MS, (ms) => ingress.post(`restate/${op.path}`, { json: op.body, headers, timeout: { request: ms } }));
  if (op.path.startsWith('call/')) {
    const result = jsonOf(a, 200);
    if (result !== undefined && 'invocationId' in a && a.invocationId !== undefined) return { op, acked: true, invocationId: a.invocationId, result };
  } else {
    const invocationId = (jsonOf(a, 202) as { invocationId?: string } | undefined)?.invocationId;
    if (invocationId !== undefined) return { op, acked: true, invocationId };
  }
  return { op, acked: false, error: describe(a) };
}
