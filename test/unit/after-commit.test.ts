/**
 * after-commit.ts: an invocation that now only waits leaves memory, unless the commit armed its
 * timer to fire within seconds (loading it back then costs more than keeping it).
 */
import test from 'ava';
import type { Committed, InvocationActor } from '../../src/runtime/kernel/invocation-actor.js';
import { performCommitted, type AfterCommitDeps } from '../../src/runtime/services/after-commit.js';
import type { Timer } from '../../src/store/types.js';

const NOW = 1_800_000_000_000;

/** Whether `performCommitted` lets a scheduled actor go after a commit that armed `timers`. */
function retiredAfter(timers: Timer[]): boolean {
  let retired = false;
  const deps = {
    log: { info: () => undefined, warn: () => undefined, debug: () => undefined },
    timers: { added: () => undefined },
    delivery: { deliver: () => undefined },
    grants: { request: () => undefined, granted: () => undefined },
    slots: { request: () => undefined },
    invocations: { completed: () => undefined },
    actors: { retire: () => (retired = true) },
    now: () => NOW,
  } as unknown as AfterCommitDeps;
  const actor = {
    id: 'inv_1',
    partition: 0,
    context: {},
    hasTag: (tag: string) => tag === 'waiting' || tag === 'startTimer',
  } as unknown as InvocationActor;
  const done: Committed = { from: undefined, to: 'scheduled', effects: [], timers, outbox: [], granted: [] };
  performCommitted(deps, actor, done);
  return retired;
}

const startTimer = (dueAt: number): Timer => ({ key: 'start:inv_1', dueAt }) as Timer;

test('a scheduled invocation whose start is seconds away stays in memory', (t) => {
  t.false(retiredAfter([startTimer(NOW + 2_000)]));
  t.false(retiredAfter([startTimer(NOW + 5_000)]));
});

test('one whose start is further away, or that armed no timer, leaves memory', (t) => {
  t.true(retiredAfter([startTimer(NOW + 5_001)]));
  t.true(retiredAfter([startTimer(NOW + 3_600_000)]));
  t.true(retiredAfter([]));
});
