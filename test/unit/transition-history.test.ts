/**
 * The history entries a commit adds (src/runtime/kernel/transition-history.ts), stepped through the
 * real invocation machine: one entry per event the machine took, none for an event it ignores.
 */
import test from 'ava';
import { invocationSteps, type InvocationEvent, type InvocationInput } from '../../machines/invocation.js';
import type { InvocationSnapshot } from '../../src/runtime/kernel/snapshots.js';
import { historyEntries, type SteppedEvent } from '../../src/runtime/kernel/transition-history.js';

const input: InvocationInput = {
  id: 'inv_1',
  target: { service: 'S', handler: 'h', serviceTy: 'Service' },
  invokedBy: 'ingress',
  retryPolicy: {
    initialInterval: 10,
    exponentiationFactor: 2,
    maxAttempts: 5,
    maxInterval: 100,
    onMaxAttempts: 'Pause',
  },
  now: 1000,
};

function run(from: InvocationSnapshot, events: InvocationEvent[]): SteppedEvent[] {
  let snapshot = from;
  return events.map((event) => {
    [snapshot] = invocationSteps.next(snapshot, event);
    return { event, snapshot };
  });
}

test('a new invocation starts its history with xstate.init from nothing to its first state', (t) => {
  const [running] = invocationSteps.initial(input);
  t.deepEqual(historyEntries(undefined, [{ event: { type: 'xstate.init', now: 1000 }, snapshot: running }]), [
    { from: null, event: 'xstate.init', to: 'running', at: 1000, attempt: 0 },
  ]);
  const [scheduled] = invocationSteps.initial({ ...input, executeAt: 5000 });
  t.is(
    historyEntries(undefined, [{ event: { type: 'xstate.init', now: 1000 }, snapshot: scheduled }])[0]?.to,
    'scheduled',
  );
});

test("each event the machine takes is one entry, with its time, the retry count it left and an attempt's failure", (t) => {
  const [running] = invocationSteps.initial(input);
  const failure = { code: 500, message: 'boom' };
  const steps = run(running, [
    { type: 'pinDeployment', deploymentId: 'dp_1', now: 1001 },
    { type: 'suspend', awaiting: { completions: [1], signals: [], namedSignals: [] }, now: 1002 },
    { type: 'wake', now: 1003 },
    { type: 'attemptFailed', failure, now: 1004 },
    { type: 'timerDue', now: 1014 },
    { type: 'complete', completion: { ok: '' }, now: 1020 },
  ]);
  t.deepEqual(historyEntries(running, steps), [
    { from: 'running', event: 'pinDeployment', to: 'running', at: 1001, attempt: 0 },
    { from: 'running', event: 'suspend', to: 'suspended', at: 1002, attempt: 0 },
    { from: 'suspended', event: 'wake', to: 'running', at: 1003, attempt: 0 },
    { from: 'running', event: 'attemptFailed', to: 'backingOff', at: 1004, attempt: 1, failure },
    { from: 'backingOff', event: 'timerDue', to: 'running', at: 1014, attempt: 1 },
    { from: 'running', event: 'complete', to: 'completed', at: 1020, attempt: 1 },
  ]);
});

test('events the machine does not take leave no entry', (t) => {
  const [running] = invocationSteps.initial(input);
  const steps = run(running, [
    { type: 'timerDue', now: 1001 },
    { type: 'resume', now: 1002 },
    { type: 'kill', failure: { code: 409, message: 'killed' }, now: 1003 },
    { type: 'wake', now: 1004 },
  ]);
  t.deepEqual(historyEntries(running, steps), [
    { from: 'running', event: 'kill', to: 'completed', at: 1003, attempt: 0 },
  ]);
  t.deepEqual(historyEntries(running, []), []);
});

test('an attempt failure keeps what the UI lists of it, with a long stack trace cut', (t) => {
  const [running] = invocationSteps.initial(input);
  const failure = {
    code: 500,
    message: 'boom',
    stacktrace: 'x'.repeat(10_000),
    relatedCommandIndex: 2,
    relatedCommandName: 'step',
    errorCode: 'RT0007',
    nextRetryDelay: 5,
  };
  const [entry] = historyEntries(running, run(running, [{ type: 'attemptFailed', failure, now: 1001 }]));
  t.deepEqual(
    { ...entry?.failure, stacktrace: undefined },
    {
      code: 500,
      message: 'boom',
      stacktrace: undefined,
      relatedCommandIndex: 2,
      relatedCommandName: 'step',
      errorCode: 'RT0007',
    },
  );
  t.is(entry?.failure?.stacktrace?.length, 4096 + 2);
});
