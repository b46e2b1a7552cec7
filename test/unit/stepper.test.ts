/**
 * The runtime's Stepper must be XState's `initialTransition` / `transition` without their
 * per-call actor: the same snapshots and the same actions, step after step.
 */
import test, { type ExecutionContext } from 'ava';
import {
  assign,
  initialTransition,
  raise,
  setup,
  transition,
  type AnyStateMachine,
  type EventFromLogic,
  type InputFrom,
} from 'xstate';
import {
  invocationMachine,
  invocationSteps,
  type InvocationEvent,
  type InvocationInput,
} from '../../machines/invocation.js';
import { objectKeyMachine, objectKeySteps, type ObjectKeyEvent } from '../../machines/object-key.js';
import { attemptMachine, attemptSteps, type AttemptEvent } from '../../machines/attempt.js';
import { FlatStepper, type Steps } from '../../machines/stepper.js';

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
  stepper: Steps<M>,
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

/** A small seeded generator, so that a failing walk can be walked again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
}

function randomInvocationInput(rnd: () => number): InvocationInput {
  const pick = <T>(...xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const flag = () => rnd() < 0.5;
  return {
    id: 'inv_walk',
    target: { service: 'S', handler: 'h', serviceTy: pick('Service', 'VirtualObject', 'Workflow') },
    invokedBy: 'ingress',
    retryPolicy: {
      initialInterval: pick(0, 50),
      exponentiationFactor: pick(1, 2),
      maxAttempts: pick(null, 1, 2, 3),
      maxInterval: 1000,
      onMaxAttempts: pick('Pause', 'Kill'),
    },
    ...(flag() ? { exclusive: true } : {}),
    ...(flag() ? { lockHeld: true } : {}),
    ...(flag() ? { gated: true } : {}),
    ...(flag() ? { slotHeld: true } : {}),
    ...(flag() ? { completionRetention: 60_000 } : {}),
    ...(flag() ? { executeAt: pick(500, 5000) } : {}),
    now: 1000,
  };
}

function randomInvocationEvent(rnd: () => number, now: number): InvocationEvent {
  const pick = <T>(...xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  switch (pick(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)) {
    case 0:
      return { type: 'timerDue', now };
    case 1:
      return { type: 'lockGranted', now };
    case 2:
      return { type: 'slotGranted', now };
    case 3:
      return { type: 'suspend', awaiting: { completions: [1], signals: [], namedSignals: ['n'] }, now };
    case 4:
      return { type: 'wake', now };
    case 5:
      return {
        type: 'attemptFailed',
        failure: {
          code: 500,
          message: 'boom',
          ...(rnd() < 0.3 ? { nextRetryDelay: 7 } : {}),
          ...(rnd() < 0.3 ? { behavior: pick('retry' as const, 'pause' as const, 'fail' as const) } : {}),
          ...(rnd() < 0.3 ? { metadata: [{ key: 'k', value: 'v' }], stacktrace: 'at x' } : {}),
        },
        now,
      };
    case 6:
      return {
        type: 'complete',
        completion: rnd() < 0.5 ? { ok: 'e30=' } : { failure: { code: 1, message: 'no' } },
        now,
      };
    case 7:
      return { type: 'pinDeployment', deploymentId: 'dp_x', now };
    case 8:
      return { type: 'kill', failure: { code: 409, message: 'killed' }, now };
    case 9:
      return { type: 'pause', now };
    default:
      return { type: 'resume', now };
  }
}

type Snap = {
  value: unknown;
  status: string;
  output: unknown;
  error: unknown;
  context: unknown;
  tags: Set<string>;
  hasTag(tag: string): boolean;
};

const view = (s: unknown, actions: unknown[]) => {
  const snap = s as Snap;
  return {
    value: snap.value,
    status: snap.status,
    output: snap.output,
    error: snap.error,
    context: snap.context,
    tags: [...snap.tags].sort(),
    actions: (actions as Seen['actions']).map((a) => ({ type: a.type, params: a.params })),
  };
};

/**
 * Random walks stepped by XState and by `fast` side by side: every step must give the same
 * snapshot (value, status, output, context, tags) and actions, and a new snapshot exactly when
 * XState makes one. Returns the states the walks reached.
 */
function sameOnRandomWalks<M extends AnyStateMachine>(
  t: ExecutionContext,
  machine: M,
  fast: FlatStepper<M>,
  inputOf: (rnd: () => number) => InputFrom<M>,
  eventOf: (rnd: () => number, now: number) => EventFromLogic<M>,
  walks: number,
): Set<string> {
  const reached = new Set<string>();
  for (let walk = 0; walk < walks; walk++) {
    const rnd = random(walk + 1);
    const input = inputOf(rnd);
    let [ref, refActions] = initialTransition(machine, input) as [unknown, unknown[]];
    let [ours, ourActions] = fast.initial(input) as [unknown, unknown[]];
    t.deepEqual(view(ours, ourActions), view(ref, refActions), `walk ${walk}, initial`);
    for (let i = 0; i < 12; i++) {
      const event = eventOf(rnd, 2000 + i);
      const [nextRef, nextRefActions] = transition(machine, ref as never, event) as [unknown, unknown[]];
      const [nextOurs, nextOurActions] = fast.next(ours as never, event) as [unknown, unknown[]];
      const expected = view(nextRef, nextRefActions);
      const got = view(nextOurs, nextOurActions);
      // deepEqual only on a difference: 36,000 of them would take most of the test's time.
      if (JSON.stringify(got) !== JSON.stringify(expected) || (nextOurs === ours) !== (nextRef === ref)) {
        t.deepEqual(got, expected, `walk ${walk}, step ${i} (${event.type})`);
        t.is(
          nextOurs === ours,
          nextRef === ref,
          `walk ${walk}, step ${i}: a new snapshot exactly when XState makes one`,
        );
        return reached;
      }
      [ref, refActions, ours, ourActions] = [nextRef, nextRefActions, nextOurs, nextOurActions];
      reached.add(String((ours as Snap).value));
    }
  }
  return reached;
}

test('invocation machine, FlatStepper: every step of 3,000 random walks is XState’s', (t) => {
  const reached = sameOnRandomWalks(
    t,
    invocationMachine,
    invocationSteps,
    randomInvocationInput,
    randomInvocationEvent,
    3000,
  );
  t.deepEqual([...reached].sort(), [
    'backingOff',
    'completed',
    'paused',
    'pending',
    'running',
    'scheduled',
    'suspended',
  ]);
});

test('object-key machine, FlatStepper: every step of 1,000 random walks is XState’s', (t) => {
  const ids = ['a', 'b', 'c'];
  const reached = sameOnRandomWalks(
    t,
    objectKeyMachine,
    objectKeySteps,
    () => ({ service: 'S', key: 'k' }),
    (rnd): ObjectKeyEvent => ({
      type: rnd() < 0.5 ? 'acquire' : 'release',
      invocationId: ids[Math.floor(rnd() * ids.length)]!,
    }),
    1000,
  );
  t.deepEqual([...reached].sort(), ['free', 'locked']);
});

test('FlatStepper refuses a machine it would not step as XState does', (t) => {
  const nested = setup({}).createMachine({ initial: 'a', states: { a: { initial: 'b', states: { b: {} } } } });
  t.throws(() => new FlatStepper(nested, undefined as never), { message: /compound state \(a\)/ });
  const exits = setup({}).createMachine({ initial: 'a', states: { a: { exit: assign({}) } } });
  t.throws(() => new FlatStepper(exits, undefined as never), { message: /exit actions/ });
  const delayed = setup({}).createMachine({ initial: 'a', states: { a: { after: { 10: 'b' } }, b: {} } });
  t.throws(() => new FlatStepper(delayed, undefined as never), { message: /invoke, after or onDone/ });
  const raising = setup({}).createMachine({ initial: 'a', states: { a: { entry: raise({ type: 'x' }) } } });
  t.throws(() => new FlatStepper(raising, undefined as never), { message: /built-in action other than assign/ });
});
