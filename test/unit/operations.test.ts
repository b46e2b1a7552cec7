/**
 * Where an operation runs (runtime/operations.ts): one the store refused here because its
 * partition moved meanwhile wrote nothing, so it goes to the new owner instead of failing the
 * client; anything else fails as it did.
 */
import test from 'ava';
import { Operations, type LocalOps } from '../../src/runtime/operations.js';
import type { Placement } from '../../src/runtime/types.js';
import { Fenced } from '../../src/store/types.js';

function setUp(output: (id: string) => Promise<unknown>) {
  const state = { owned: true, forwarded: [] as Array<{ partition: number; op: string; args: unknown[] }> };
  const placement: Placement = {
    owns: () => state.owned,
    owned: () => (state.owned ? [3] : []),
    forward: (partition, op, args) => {
      state.forwarded.push({ partition, op, args });
      return Promise.resolve({ state: 'forwarded' });
    },
  };
  const local = { output } as unknown as LocalOps;
  return { state, ops: new Operations(placement, local) };
}

test('an operation fenced because its partition moved meanwhile is asked of the new owner', async (t) => {
  const { state, ops } = setUp(() => {
    state.owned = false; // the hand-over happened while the operation ran here
    return Promise.reject(new Fenced(3, 'epoch 2 is past'));
  });
  t.deepEqual(await ops.at(3, 'output', ['inv_1']), { state: 'forwarded' } as never);
  t.deepEqual(state.forwarded, [{ partition: 3, op: 'output', args: ['inv_1'] }]);
});

test('a fence while the partition is still held here, or of another partition, fails as it was', async (t) => {
  const held = setUp(() => Promise.reject(new Fenced(3, 'lease being confirmed')));
  await t.throwsAsync(() => held.ops.at(3, 'output', ['inv_1']), { instanceOf: Fenced });
  t.deepEqual(held.state.forwarded, []);

  const other = setUp(() => {
    other.state.owned = false;
    return Promise.reject(new Fenced(4, 'not ours'));
  });
  await t.throwsAsync(() => other.ops.at(3, 'output', ['inv_1']), { instanceOf: Fenced });
  t.deepEqual(other.state.forwarded, []);
});

test('other failures are not sent anywhere else', async (t) => {
  const { state, ops } = setUp(() => {
    state.owned = false;
    return Promise.reject(new Error('boom'));
  });
  await t.throwsAsync(() => ops.at(3, 'output', ['inv_1']), { message: 'boom' });
  t.deepEqual(state.forwarded, []);
});
