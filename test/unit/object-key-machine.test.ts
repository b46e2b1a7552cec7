/** The lock of one virtual-object key: granted in arrival order, passed on at release. */
import test from 'ava';
import { initialTransition, transition } from 'xstate';
import { objectKeyMachine } from '../../machines/object-key.js';

const grants = (actions: unknown[]) =>
  (actions as Array<{ type: string; params?: { invocationId: string } }>)
    .filter((a) => a.type === 'grant')
    .map((a) => a.params!.invocationId);

test('acquire, queue, release in order', (t) => {
  let [s] = initialTransition(objectKeyMachine, { service: 'C', key: 'k' });
  let a;
  [s, a] = transition(objectKeyMachine, s, { type: 'acquire', invocationId: 'A' });
  t.deepEqual(grants(a), ['A']);
  [s, a] = transition(objectKeyMachine, s, { type: 'acquire', invocationId: 'B' });
  [s, a] = transition(objectKeyMachine, s, { type: 'acquire', invocationId: 'C' });
  t.deepEqual(grants(a), []);
  t.deepEqual(s.context.inbox, ['B', 'C']);
  [s, a] = transition(objectKeyMachine, s, { type: 'acquire', invocationId: 'B' });
  t.deepEqual(s.context.inbox, ['B', 'C'], 'acquiring twice queues once');
  [s, a] = transition(objectKeyMachine, s, { type: 'release', invocationId: 'A' });
  t.deepEqual(grants(a), ['B']);
  t.is(s.context.holder, 'B');
  [s, a] = transition(objectKeyMachine, s, { type: 'release', invocationId: 'C' });
  t.deepEqual(grants(a), []);
  t.deepEqual(s.context.inbox, [], 'a queued invocation that goes away leaves the inbox');
  [s, a] = transition(objectKeyMachine, s, { type: 'release', invocationId: 'B' });
  t.is(s.value, 'free');
  t.is(s.context.holder, undefined);
});
