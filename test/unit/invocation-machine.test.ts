/**
 * The invocation machine as pure transitions: each event gives the next state and the
 * effects (as data) the runtime must perform after committing.
 */
import test from 'ava';
import { initialTransition, transition } from 'xstate';
import { invocationMachine, retryDelay, type InvocationInput, type RetryPolicy } from '../../machines/invocation.js';

const policy: RetryPolicy = {
  initialInterval: 500,
  exponentiationFactor: 2,
  maxAttempts: 3,
  maxInterval: 1500,
  onMaxAttempts: 'Pause',
};
const input = (over: Partial<InvocationInput> = {}): InvocationInput => ({
  id: 'inv_x',
  target: { service: 'S', handler: 'h', serviceTy: 'Service' },
  invokedBy: 'ingress',
  retryPolicy: policy,
  now: 1000,
  ...over,
});
const types = (actions: unknown[]) => (actions as Array<{ type: string }>).map((a) => a.type);

test('a new invocation runs at once and asks for an attempt', (t) => {
  const [s, actions] = initialTransition(invocationMachine, input());
  t.is(s.value, 'running');
  t.deepEqual(types(actions), ['startAttempt']);
});

test('a delayed invocation is scheduled with a durable timer, then runs', (t) => {
  const [s, actions] = initialTransition(invocationMachine, input({ executeAt: 5000 }));
  t.is(s.value, 'scheduled');
  t.deepEqual(
    actions.map((a) => [a.type, a.params]),
    [['armTimer', { kind: 'start', dueAt: 5000 }]],
  );
  const [s2, a2] = transition(invocationMachine, s, { type: 'timerDue', now: 5001 });
  t.is(s2.value, 'running');
  t.deepEqual(types(a2), ['startAttempt']);
});

test('failures back off with the policy, then pause when attempts run out', (t) => {
  let [s] = initialTransition(invocationMachine, input());
  const fail = (now: number) =>
    transition(invocationMachine, s, { type: 'attemptFailed', failure: { code: 500, message: 'x' }, now });
  let [next, actions] = fail(2000);
  t.is(next.value, 'backingOff');
  t.deepEqual(
    actions.map((a) => [a.type, a.params]),
    [['armTimer', { kind: 'retry', dueAt: 2500 }]],
  );
  s = transition(invocationMachine, next, { type: 'timerDue', now: 2500 })[0];
  [next, actions] = fail(3000);
  t.is(next.context.nextRetryAt, 4000);
  s = transition(invocationMachine, next, { type: 'timerDue', now: 4000 })[0];
  [next, actions] = fail(5000);
  t.is(next.value, 'paused');
  t.is(next.context.retryCount, 3);
  t.deepEqual(types(actions), []);
});

test('onMaxAttempts Kill completes with the last failure and responds', (t) => {
  const [s] = initialTransition(
    invocationMachine,
    input({ retryPolicy: { ...policy, maxAttempts: 1, onMaxAttempts: 'Kill' } }),
  );
  const [next, actions] = transition(invocationMachine, s, {
    type: 'attemptFailed',
    failure: { code: 500, message: 'boom', stacktrace: 'st' },
    now: 9,
  });
  t.is(next.value, 'completed');
  t.deepEqual(next.context.completion, { failure: { code: 500, message: 'boom', stacktrace: 'st' } });
  t.deepEqual(types(actions), ['releaseLock', 'respond', 'armTimer']);
});

test('the SDK next_retry_delay overrides the policy once', (t) => {
  const [s] = initialTransition(invocationMachine, input());
  const [next] = transition(invocationMachine, s, {
    type: 'attemptFailed',
    failure: { code: 500, message: 'x', nextRetryDelay: 300 },
    now: 100,
  });
  t.is(next.context.nextRetryAt, 400);
});

test('suspension waits for a wake; completion responds', (t) => {
  const [s] = initialTransition(invocationMachine, input());
  const awaiting = { completions: [2], signals: [1], namedSignals: [] };
  const [suspended, a1] = transition(invocationMachine, s, { type: 'suspend', awaiting, now: 5 });
  t.is(suspended.value, 'suspended');
  t.deepEqual(a1, []);
  const [running, a2] = transition(invocationMachine, suspended, { type: 'wake', now: 6 });
  t.is(running.value, 'running');
  t.deepEqual(types(a2), ['startAttempt']);
  const [done, a3] = transition(invocationMachine, running, { type: 'complete', completion: { ok: 'aGk=' }, now: 7 });
  t.is(done.value, 'completed');
  t.is(done.status, 'done');
  t.deepEqual(types(a3), ['releaseLock', 'respond', 'armTimer']);
});

test('an exclusive invocation waits in pending until its key lock is granted', (t) => {
  const [queued, a0] = initialTransition(invocationMachine, input({ exclusive: true }));
  t.is(queued.value, 'pending');
  t.deepEqual(a0, []);
  const [running, a1] = transition(invocationMachine, queued, { type: 'lockGranted', now: 2 });
  t.is(running.value, 'running');
  t.true(running.context.lockHeld);
  t.deepEqual(types(a1), ['startAttempt']);
  const [held] = initialTransition(invocationMachine, input({ exclusive: true, lockHeld: true }));
  t.is(held.value, 'running');
  const [delayed] = initialTransition(invocationMachine, input({ exclusive: true, executeAt: 5000 }));
  const [due, a2] = transition(invocationMachine, delayed, { type: 'timerDue', now: 5000 });
  t.is(due.value, 'pending');
  t.deepEqual(types(a2), ['requestLock']);
});

test('a persisted snapshot restores to the same state', (t) => {
  const [s] = initialTransition(invocationMachine, input({ executeAt: 5000 }));
  const restored = invocationMachine.resolveState({
    value: String(s.value),
    context: JSON.parse(JSON.stringify(s.context)),
  });
  const [next] = transition(invocationMachine, restored, { type: 'timerDue', now: 5000 });
  t.is(next.value, 'running');
});

test('retry delays grow by the factor up to the max interval', (t) => {
  t.is(retryDelay(policy, 1), 500);
  t.is(retryDelay(policy, 2), 1000);
  t.is(retryDelay(policy, 3), undefined);
  t.is(retryDelay({ ...policy, maxAttempts: null }, 10), 1500);
});
