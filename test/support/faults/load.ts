/**
 * Runs a round's operations against the ingress, `concurrency` at a time, and records what each
 * one's client learned: acknowledged (a call answered 200 with its result, a send 202 with its
 * invocation id) or not (an error, a reset, a timeout: the outcome is unknown).
 *
 * The client retries every 503, as a naive client does (issue 31): the server must answer a
 * 503 only when nothing was applied (or, past its outage bound, say that a retry is not safe),
 * so the counts stay exact. The 503s are counted, and those whose outcome was not known apart.
 */
import type { Got } from 'got';
import pLimit from 'p-limit';
import { setTimeout as delay } from 'node:timers/promises';
import { answer, describe, jsonOf, type Answer } from './answer.js';
import type { Op } from './plan.js';

export interface Sent {
  op: Op;
  acked: boolean;
  invocationId?: string;
  /** What an acknowledged call answered. */
  result?: unknown;
  /** Why it is not acknowledged. */
  error?: string;
  /** When it was first sent, and when its final answer came. */
  sentAt: number;
  answeredAt: number;
  /** 503s it got (and retried), and how many of them said the outcome was not known. */
  unavailable: number;
  ambiguous: number;
}

/** A 503 that leaves the client guessing: the text of an unknown outcome (before issue 31, or past the bound). */
export const AMBIGUOUS = /may or may not|not known/;
const RETRY_503_MS = 200;

/** How long one operation may take before its outcome counts as unknown. */
const OP_TIMEOUT_MS = 30_000;
/**
 * After a failure a worker waits a little: while a process is down, every request fails at once,
 * and without a pause the load would be spent on the outage instead of running across it.
 */
const PAUSE_AFTER_FAILURE_MS = 100;

export async function runLoad(
  ingress: Got,
  plan: Op[],
  concurrency: number,
  onStart: (op: Op) => void,
): Promise<Sent[]> {
  return pLimit(concurrency).map(plan, async (op) => {
    onStart(op);
    const sent = await send(ingress, op);
    if (!sent.acked) await delay(PAUSE_AFTER_FAILURE_MS);
    return sent;
  });
}

async function send(ingress: Got, op: Op): Promise<Sent> {
  const headers = op.idempotencyKey === undefined ? {} : { 'idempotency-key': op.idempotencyKey };
  const sentAt = Date.now();
  const deadline = sentAt + OP_TIMEOUT_MS;
  let unavailable = 0;
  let ambiguous = 0;
  let a: Answer;
  for (;;) {
    a = await answer(deadline, (ms) =>
      ingress.post(`restate/${op.path}`, { json: op.body, headers, timeout: { request: ms } }),
    );
    if (!('status' in a) || a.status !== 503 || Date.now() + RETRY_503_MS >= deadline) break;
    unavailable++;
    if (AMBIGUOUS.test(a.body)) ambiguous++;
    await delay(RETRY_503_MS);
  }
  const seen = { sentAt, answeredAt: Date.now(), unavailable, ambiguous };
  if (op.path.startsWith('call/')) {
    const result = jsonOf(a, 200);
    if (result !== undefined && 'invocationId' in a && a.invocationId !== undefined)
      return { op, acked: true, invocationId: a.invocationId, result, ...seen };
  } else {
    const invocationId = (jsonOf(a, 202) as { invocationId?: string } | undefined)?.invocationId;
    if (invocationId !== undefined) return { op, acked: true, invocationId, ...seen };
  }
  return { op, acked: false, error: describe(a), ...seen };
}
