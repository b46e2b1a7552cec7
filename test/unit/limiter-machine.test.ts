/** A scope's limiter: slots by rule bucket, waiters by priority then arrival, paused queues, tokens, backlog bounds. */
import test from 'ava';
import {
  backlogFull,
  backlogUse,
  limiterEffects,
  limiterSteps,
  type FlowRule,
  type LimiterEvent,
} from '../../machines/limiter.js';

type Snapshot = ReturnType<typeof limiterSteps.initial>[0];

function run(events: LimiterEvent[]): { s: Snapshot; grants: string[][]; wakes: number[] } {
  let [s] = limiterSteps.initial({ scope: 'sc' });
  const grants: string[][] = [];
  const wakes: number[] = [];
  for (const e of events) {
    const [next, actions] = limiterSteps.next(s, e);
    s = next;
    const effects = limiterEffects(actions);
    grants.push(effects.flatMap((x) => (x.type === 'grant' ? [x.params.invocationId] : [])));
    wakes.push(...effects.flatMap((x) => (x.type === 'wakeAt' ? [x.params.dueAt] : [])));
  }
  return { s, grants, wakes };
}

const vq = { id: 'vq', service: 'S' };
const acquire = (id: string, rules: FlowRule[], now = 0, limitKey?: string): LimiterEvent => ({
  type: 'acquire',
  invocationId: id,
  vqueue: vq,
  rules,
  now,
  ...(limitKey ? { limitKey } : {}),
});
const prioritized = (id: string, priority: number, rules: FlowRule[]): LimiterEvent => ({
  type: 'acquire',
  invocationId: id,
  vqueue: vq,
  rules,
  now: 0,
  priority,
});
const release = (id: string, rules: FlowRule[], now = 0): LimiterEvent => ({
  type: 'release',
  invocationId: id,
  rules,
  now,
});

test('a concurrency rule gives slots in arrival order as they are given back', (t) => {
  const rules = [{ pattern: 'sc', concurrency: 2 }];
  const { s, grants } = run([
    acquire('A', rules),
    acquire('B', rules),
    acquire('C', rules),
    acquire('D', rules),
    acquire('C', rules),
    release('A', rules),
    release('D', rules),
  ]);
  t.deepEqual(grants, [['A'], ['B'], [], [], [], ['C'], []]);
  t.deepEqual(
    s.context.running.map((r) => r.invocationId),
    ['B', 'C'],
  );
  t.deepEqual(s.context.waiting, [], 'a waiter that goes away leaves the queue; acquiring twice queues once');
  t.is(s.value, 'running');
});

test('a `*` pattern counts each limit key apart; rule changes apply at once', (t) => {
  const perKey = [{ pattern: 'sc/*', concurrency: 1 }];
  const { s, grants } = run([
    acquire('A', perKey, 0, 'k1'),
    acquire('B', perKey, 0, 'k1'),
    acquire('C', perKey, 0, 'k2'),
    { type: 'tick', rules: [{ pattern: 'sc/*', concurrency: 2 }], now: 0 },
    acquire('D', [], 0, 'k1'),
  ]);
  t.deepEqual(grants, [['A'], [], ['C'], ['B'], ['D']]);
  t.is(s.value, 'running');
});

test('a paused queue waits whatever the rules say, until resumed', (t) => {
  const { s, grants } = run([
    { type: 'pauseQueue', vqueue: 'vq', rules: [], now: 0 },
    acquire('A', []),
    { type: 'resumeQueue', vqueue: 'vq', rules: [], now: 0 },
  ]);
  t.deepEqual(grants, [[], [], ['A']]);
  t.deepEqual(s.context.paused, []);
});

test('a rate rule gives one token, then one per 1/rate seconds, and asks to be woken for the next', (t) => {
  const rules = [{ pattern: 'sc', rate: 10 }];
  const { grants, wakes } = run([
    acquire('A', rules, 1000),
    acquire('B', rules, 1000),
    acquire('C', rules, 1050),
    { type: 'tick', rules, now: 1100 },
    { type: 'tick', rules, now: 1200 },
  ]);
  t.deepEqual(grants, [['A'], [], [], ['B'], ['C']]);
  t.deepEqual(wakes, [1100, 1100, 1200]);
});

test('waiters start by priority (1 first), then in arrival order; the waiting list stays in arrival order', (t) => {
  const rules = [{ pattern: 'sc', concurrency: 1 }];
  const { s, grants } = run([
    acquire('A', rules),
    prioritized('low', 9, rules),
    acquire('B', rules),
    prioritized('high', 1, rules),
    prioritized('high2', 1, rules),
    release('A', rules),
    release('high', rules),
    release('high2', rules),
    release('B', rules),
  ]);
  t.deepEqual(grants, [['A'], [], [], [], [], ['high'], ['high2'], ['B'], ['low']]);
  t.deepEqual(
    s.context.running.map((r) => r.invocationId),
    ['low'],
  );
  const mid = run([
    acquire('A', rules),
    prioritized('low', 9, rules),
    acquire('B', rules),
    prioritized('high', 1, rules),
  ]).s;
  t.deepEqual(
    mid.context.waiting.map((w) => w.invocationId),
    ['low', 'B', 'high'],
  );
});

test('backlog: refused past the bound, counting waiters, those on their way, and free slots while nobody waits', (t) => {
  const rules: FlowRule[] = [{ pattern: 'sc', concurrency: 1, backlog: 2 }];
  const empty = run([]).s.context;
  t.is(backlogFull({ ...empty, rules }, undefined, []), undefined);
  // One free slot: the first of three on their way starts, two wait: a fourth would be the third waiter.
  t.is(backlogFull({ ...empty, rules }, undefined, [undefined, undefined]), undefined);
  t.deepEqual(backlogFull({ ...empty, rules }, undefined, [undefined, undefined, undefined]), rules[0]);
  const { s } = run([acquire('A', rules), acquire('B', rules), acquire('C', rules)]);
  t.deepEqual(backlogFull({ ...s.context, rules }, undefined, []), rules[0]);
  t.deepEqual(backlogUse(s.context, undefined), { limit: 2, used: 2 });
  // Per limit key: another key's bucket has room.
  const perKey: FlowRule[] = [{ pattern: 'sc/*', concurrency: 1, backlog: 0 }];
  const keyed = run([acquire('A', perKey, 0, 'k1')]).s;
  t.deepEqual(backlogFull({ ...keyed.context, rules: perKey }, 'k1', []), perKey[0]);
  t.is(backlogFull({ ...keyed.context, rules: perKey }, 'k2', []), undefined);
  t.is(
    backlogFull({ ...keyed.context, rules: [{ pattern: 'sc', concurrency: 1 }] }, 'k1', []),
    undefined,
    'no bound, never full',
  );
});
