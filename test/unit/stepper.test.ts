/**
 * The runtime's Stepper must be XState's `initialTransition` / `transition` without their
 * per-call actor: the same snapshots and the same actions, step after step.
 */
import test from 'ava';
import { initialTransition, transition, type AnyStateMachine, type EventFromLogic, type InputFrom } from 'xstate';
import {
  invocationMachine,
  invocationSteps,
  type InvocationEvent,
  type InvocationInput,
} from '../../machines/invocation.js';
import { objectKeyMachine, objectKeySteps, type ObjectKeyEvent } from '../../machines/object-key.js';
import { attemptMachine, attemptSteps, type AttemptEvent } from '../../machines/attempt.js';
import type { MemoStepper, Stepper } from '../../machines/stepper.js';

type Seen = { value: unknown; status: string; context: unknown; actions: Array<{ type: string; params: unknown }> };

function walk<M extends AnyStateMachine>(
  init: (input: InputFrom<M>) => [unknown, unknown[]],
  step: (snapshot: unknown, event: EventFromLogic<M>) => [unknown, unknown[]],
  input: InputFrom<M>,
  events: Array<EventFromLogic<M>>,
): Seen[] {
  const seen = (snapshot: unknown, actions: unknown[]): Seen => {
    const s = snapshot as { value: unknown; status: string; context: unknown };
    return {
      value: s.value,
      status: s.status,
      context: s.context,
      actions: (actions as Seen['actions']).map((a) => ({ type: a.type, params: a.params })),
    };
  };
  let [snapshot, actions] = init(input);
  const out = [seen(snapshot, actions)];
  for (const event of events) {
    [snapshot, actions] = step(snapshot, event);
    out.push(seen(snapshot, actions));
  }
  return out;
}

function same<M extends AnyStateMachine>(
  machine: M,
  stepper: Stepper<M> | MemoStepper<M>,
  input: InputFrom<M>,
  events: Array<EventFromLogic<M>>,
) {
  const reference = walk<M>(
    (i) => initialTransition(machine, i) as [unknown, unknown[]],
    (s, e) => transition(machine, s as never, e) as [unknown, unknown[]],
    input,
    events,
  );
  const ours = walk<M>(
    (i) => stepper.initial(i) as [unknown, unknown[]],
    (s, e) => stepper.next(s as never, e) as [unknown, unknown[]],
    input,
    events,
  );
  return { reference, ours };
}

const input: InvocationInput = {
  id: 'inv_x',
  target: { service: 'S', handler: 'h', key: 'k', serviceTy: 'VirtualObject' },
  invokedBy: 'ingress',
  retryPolicy: {
    initialInterval: 500,
    exponentiationFactor: 2,
    maxAttempts: 3,
    maxInterval: 1500,
    onMaxAttempts: 'Pause',
  },
  exclusive: true,
  completionRetention: 60_000,
  executeAt: 2000,
  now: 1000,
};

test('invocation machine: a delayed exclusive invocation through retries, suspension, pause and completion', (t) => {
  const events: InvocationEvent[] = [
    { type: 'timerDue', now: 2000 },
    { type: 'lockGranted', now: 2001 },
    { type: 'pinDeployment', deploymentId: 'dp_1', now: 2002 },
    { type: 'attemptFailed', failure: { code: 500, message: 'boom' }, now: 2003 },
    { type: 'timerDue', now: 2600 },
    { type: 'suspend', awaiting: { completions: [1], signals: [], namedSignals: [] }, now: 2700 },
    { type: 'wake', now: 2800 },
    { type: 'pause', now: 2900 },
    { type: 'resume', now: 3000 },
    { type: 'complete', completion: { ok: 'e30=' }, now: 3100 },
  ];
  const { reference, ours } = same(invocationMachine, invocationSteps, input, events);
  t.deepEqual(ours, reference);
  t.is(ours.at(-1)?.value, 'completed');
});

test('invocation machine: killed while running, and a call that starts at once', (t) => {
  const { executeAt: _, ...now } = input;
  const { reference, ours } = same(invocationMachine, invocationSteps, { ...now, exclusive: false }, [
    { type: 'kill', failure: { code: 409, message: 'killed' }, now: 1500 },
  ]);
  t.deepEqual(ours, reference);
  t.deepEqual(
    ours.map((s) => s.value),
    ['running', 'completed'],
  );
});

test('object-key machine: acquire, queue, release and grant', (t) => {
  const events: ObjectKeyEvent[] = [
    { type: 'acquire', invocationId: 'a' },
    { type: 'acquire', invocationId: 'b' },
    { type: 'acquire', invocationId: 'c' },
    { type: 'release', invocationId: 'c' },
    { type: 'release', invocationId: 'a' },
    { type: 'release', invocationId: 'b' },
  ];
  const { reference, ours } = same(objectKeyMachine, objectKeySteps, { service: 'S', key: 'k' }, events);
  t.deepEqual(ours, reference);
  t.true(ours.some((s) => s.actions.some((a) => a.type === 'grant')));
});

test('attempt machine, remembered steps: the same as XState on first use and on every later hit', (t) => {
  const streamed: AttemptEvent[] = [
    { type: 'start' },
    { type: 'replayed' },
    { type: 'frames' },
    { type: 'answered' },
    { type: 'frames' },
    { type: 'inactive' },
    { type: 'answered' },
    { type: 'abortTimeout' },
  ];
  const broken: AttemptEvent[] = [
    { type: 'start' },
    { type: 'replayed' },
    { type: 'frames' },
    { type: 'broken', message: 'reset', code: 500 },
  ];
  for (const input of [
    { requestResponse: false, inactivityTimeout: 60_000, abortTimeout: 600_000 },
    { requestResponse: true, inactivityTimeout: 60_000, abortTimeout: 600_000 },
    { requestResponse: false, inactivityTimeout: 1_000, abortTimeout: 2_000 },
  ]) {
    for (const events of [
      streamed,
      streamed,
      broken,
      broken,
      [{ type: 'start' } as AttemptEvent, { type: 'close' } as AttemptEvent],
    ]) {
      const { reference, ours } = same(attemptMachine, attemptSteps, input, events);
      t.deepEqual(ours, reference);
    }
  }
});
