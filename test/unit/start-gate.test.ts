import test from 'ava';
import { StartGate } from '../../src/runtime/invoker/start-gate.js';

test('slots up to the limit, then waiters in order; a waiter that no longer wants its slot passes it on', (t) => {
  const gate = new StartGate(2);
  t.true(gate.tryTake());
  t.true(gate.tryTake());
  t.false(gate.tryTake());
  const order: string[] = [];
  gate.wait(() => (order.push('a'), true));
  gate.wait(() => (order.push('ended'), false));
  gate.wait(() => (order.push('b'), true));
  t.deepEqual(order, []);
  // Someone waits: a free slot goes to them, not to whoever asks next.
  gate.release();
  t.deepEqual(order, ['a']);
  t.false(gate.tryTake());
  gate.release();
  t.deepEqual(order, ['a', 'ended', 'b']);
  gate.release();
  gate.release();
  t.true(gate.tryTake());
  t.true(gate.tryTake());
  t.false(gate.tryTake());
});

test('a waiter granted while the gate has room runs at once, and may give its slot back inside', (t) => {
  const gate = new StartGate(1);
  let ran = 0;
  gate.wait(() => {
    ran++;
    gate.release();
    return true;
  });
  gate.wait(() => (ran++, true));
  t.is(ran, 2);
  t.false(gate.tryTake());
});
