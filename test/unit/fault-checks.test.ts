/**
 * The checks of the fault campaign (test/support/faults/checks.ts) on made-up rounds: what they
 * must flag, and the retries they must let pass (a step run again because its first result was
 * never journaled; an attempt cut before it left its key).
 */
import test from 'ava';
import type { Answer } from '../support/faults/answer.js';
import { check } from '../support/faults/checks.js';
import type { Execution, StepName } from '../support/faults/executions.js';
import type { Sent } from '../support/faults/load.js';
import { KEYS, type Op } from '../support/faults/plan.js';
import type { Observed } from '../support/faults/settle.js';

const ok = (body: unknown, invocationId?: string): Answer => ({
  status: 200,
  body: JSON.stringify(body),
  invocationId,
});

/** A round in which `adds` ran one after the other on k0, each adding 1. */
function round() {
  const executions: Execution[] = [];
  const run = (name: StepName, inv: string, op: string, key?: string) => {
    const exec = `x${executions.length}`;
    executions.push({
      name,
      inv,
      exec,
      op,
      at: 1_000 + executions.length,
      line: executions.length,
      ...(key ? { key } : {}),
    });
    return exec;
  };
  const sent: Sent[] = [];
  const observed: Observed = {
    byId: new Map(),
    byIdempotencyKey: new Map(),
    unfinished: [],
    inbox: [],
    finalCalls: new Map(KEYS.map((k) => [k, ok({ op: `final-${k}` })])),
    counts: new Map(KEYS.map((k) => [k, ok(0)])),
    locks: new Map(),
  };
  const op = (index: number, key: string): Op => ({
    index,
    kind: 'addSend',
    path: `send/Counter/${key}/add`,
    body: { op: `op${index}`, sleepMs: 0, delta: 1 },
    key,
  });
  /** An acknowledged add of 1 on `key` by `inv` that read `before`, with the executions it used. */
  const add = (index: number, inv: string, before: number, enter: string, exit: string, key = 'k0') => {
    sent.push({ op: op(index, key), acked: true, invocationId: inv, ...answered });
    observed.byId.set(inv, ok({ op: `op${index}`, before, after: before + 1, enter, exit }));
  };
  return { executions, run, sent, observed, add };
}

const kinds = (r: ReturnType<typeof round>) =>
  check(r.sent, r.executions, r.observed).map((v) => `${v.kind} ${v.subject}`);

/** What the client saw besides the answer: no 503 on the way. */
const answered = { sentAt: 0, answeredAt: 0, unavailable: 0, ambiguous: 0 };

test('two adds one after the other, counted: nothing to report', (t) => {
  const r = round();
  r.add(1, 'inv_a', 0, r.run('enter', 'inv_a', 'op1', 'k0'), r.run('exit', 'inv_a', 'op1', 'k0'));
  r.add(2, 'inv_b', 1, r.run('enter', 'inv_b', 'op2', 'k0'), r.run('exit', 'inv_b', 'op2', 'k0'));
  r.observed.counts.set('k0', ok(2));
  t.deepEqual(kinds(r), []);
});

test('a step run again before any result was journaled passes; run again after the used one, it is flagged', (t) => {
  const r = round();
  r.run('enter', 'inv_a', 'op1', 'k0'); // an attempt cut by a kill: it entered and never left
  const enter = r.run('enter', 'inv_a', 'op1', 'k0');
  r.add(1, 'inv_a', 0, enter, r.run('exit', 'inv_a', 'op1', 'k0'));
  r.observed.counts.set('k0', ok(1));
  t.deepEqual(kinds(r), []);
  r.run('exit', 'inv_a', 'op1', 'k0');
  t.deepEqual(kinds(r), ['runTwice op1 exit']);
});

test("a second enter inside the holder's interval is an overlap, and two adds that read the same count lose one", (t) => {
  const r = round();
  const enterA = r.run('enter', 'inv_a', 'op1', 'k0');
  const enterB = r.run('enter', 'inv_b', 'op2', 'k0');
  const exitA = r.run('exit', 'inv_a', 'op1', 'k0');
  r.add(1, 'inv_a', 0, enterA, exitA);
  r.add(2, 'inv_b', 0, enterB, r.run('exit', 'inv_b', 'op2', 'k0'));
  r.observed.counts.set('k0', ok(1));
  t.deepEqual(kinds(r), ['overlap k0', 'wrongCount k0']);
});

test('an acknowledged invocation that does not answer is lost; a key whose exclusive call hangs is stuck', (t) => {
  const r = round();
  r.add(1, 'inv_a', 0, r.run('enter', 'inv_a', 'op1', 'k0'), r.run('exit', 'inv_a', 'op1', 'k0'));
  r.observed.counts.set('k0', ok(1));
  r.observed.byId.set('inv_a', { error: 'ETIMEDOUT' });
  r.observed.finalCalls.set('k0', { error: 'ETIMEDOUT' });
  r.observed.locks.set('k0', {
    holder: 'inv_a',
    inbox: ['inv_c', 'inv_d'],
    status: new Map([
      ['inv_a', 'completed'],
      ['inv_c', 'pending'],
      ['inv_d', 'completed'],
    ]),
  });
  const violations = check(r.sent, r.executions, r.observed);
  t.deepEqual(
    violations.map((v) => `${v.kind} ${v.subject}`),
    ['lost op1', 'stuckKey k0'],
  );
  t.regex(
    violations[1]!.detail,
    /names inv_a as holder \(completed; ran enter at .*, exit at .*\), and in its inbox 1 pending, 1 completed \(inv_d\)$/,
  );
});

test('a count outside the acknowledged adds plus the unacknowledged ones is wrong', (t) => {
  const r = round();
  r.add(1, 'inv_a', 0, r.run('enter', 'inv_a', 'op1', 'k0'), r.run('exit', 'inv_a', 'op1', 'k0'));
  r.sent.push({
    op: {
      index: 2,
      kind: 'addCall',
      path: 'call/Counter/k0/add',
      body: { op: 'op2', sleepMs: 0, delta: 3 },
      key: 'k0',
    },
    acked: false,
    error: 'ECONNRESET',
    ...answered,
  });
  r.observed.counts.set('k0', ok(5));
  t.deepEqual(kinds(r), ['wrongCount k0']);
});

test('a request unanswered for 30 s is stalled unless the service was away for all but 20 s of it; overlapping outages count once', (t) => {
  const stalledAfter = (outages: Array<[number, number]>) => {
    const r = round();
    r.sent.push({
      op: { index: 1, kind: 'call', path: 'call/Durable/run', body: { op: 'op1', sleepMs: 0 } },
      acked: false,
      error: 'ETIMEDOUT',
      ...answered,
      sentAt: 0,
      answeredAt: 30_000,
    });
    return check(r.sent, r.executions, r.observed, outages)
      .filter((v) => v.kind === 'stalled')
      .map((v) => v.subject);
  };
  t.deepEqual(stalledAfter([]), ['op1']);
  t.deepEqual(stalledAfter([[5_000, 16_000]]), []);
  // Two kills 1 s apart: 10 s away in all (20 s up), not 18 s.
  t.deepEqual(
    stalledAfter([
      [5_000, 14_000],
      [6_000, 15_000],
    ]),
    ['op1'],
  );
});
