import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { StartGate } from '../../src/runtime/invoker/start-gate.js';

/** Longer than the gate's quiet time after the last admission. */
const QUIET = 60;

/** An admission that stays in flight until `end` is called. */
function admissionOf(gate: StartGate): { end: () => void; done: Promise<void> } {
  let end!: () => void;
  const done = gate.admitting(() => new Promise<void>((resolve) => (end = resolve)));
  return { end, done };
}

test('while something is admitted: slots up to the limit, then waiters in order; a waiter that no longer wants its slot passes it on', async (t) => {
  const gate = new StartGate(2);
  const admission = admissionOf(gate);
  t.true(gate.tryTake());
  t.true(gate.tryTake());
  t.false(gate.tryTake());
  const order: string[] = [];
  gate.wait(() => (order.push('a'), true));
  gate.wait(() => (order.push('ended'), false));
  gate.wait(() => (order.push('b'), true));
  gate.wait(() => (order.push('c'), true));
  t.deepEqual(order, []);
  // Someone waits: a free slot goes to them, not to whoever asks next.
  gate.release();
  t.deepEqual(order, ['a']);
  t.false(gate.tryTake());
  gate.release();
  t.deepEqual(order, ['a', 'ended', 'b']);
  // The admission is over, and a moment later whoever still waits starts, and so does anyone after.
  admission.end();
  await admission.done;
  t.deepEqual(order, ['a', 'ended', 'b']);
  await sleep(QUIET);
  t.deepEqual(order, ['a', 'ended', 'b', 'c']);
  t.true(gate.tryTake());
});

test('with nothing being admitted, every attempt starts at once', (t) => {
  const gate = new StartGate(1);
  t.true(gate.tryTake());
  t.true(gate.tryTake());
  let ran = 0;
  gate.wait(() => (ran++, true));
  t.is(ran, 1);
});

test('a waiter granted while the gate has room runs at once, and may give its slot back inside', async (t) => {
  const gate = new StartGate(1);
  const admission = admissionOf(gate);
  let ran = 0;
  gate.wait(() => {
    ran++;
    gate.release();
    return true;
  });
  gate.wait(() => (ran++, true));
  t.is(ran, 2);
  t.false(gate.tryTake());
  admission.end();
  await admission.done;
});

test('an admission that fails still counts out', async (t) => {
  const gate = new StartGate(1);
  await t.throwsAsync(gate.admitting(() => Promise.reject(new Error('refused'))));
  t.true(gate.tryTake());
  t.false(gate.tryTake());
  await sleep(QUIET);
  t.true(gate.tryTake());
});
