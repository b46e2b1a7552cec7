/**
 * The observed store (src/store/observed.ts) tells listeners what a commit changed only once
 * the commit is stored, and nothing for a commit that failed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EmbeddedStore } from '../../src/store/embedded/embedded-store.js';
import { ObservedStore, type StoreChange } from '../../src/store/observed.js';
import { TransitionConflict } from '../../src/store/types.js';

async function observed(): Promise<{ store: ObservedStore; changes: StoreChange[]; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-observed-'));
  const store = new ObservedStore(await EmbeddedStore.open(dir), { recordKinds: ['object'] });
  const changes: StoreChange[] = [];
  store.subscribe((c) => changes.push(c));
  return {
    store,
    changes,
    cleanup: async () => (await store.close(), await rm(dir, { recursive: true, force: true })),
  };
}

const step = { from: 'running', event: 'suspend', to: 'suspended', at: 5, attempt: 0 };

test('a commit is reported after it is stored, with what it changed', async (t) => {
  const { store, changes, cleanup } = await observed();
  try {
    const committing = store.commit({
      partition: 2,
      invocations: [{ id: 'a', snapshot: { value: 'suspended' }, active: true }],
      journal: [{ id: 'b', at: 0, entries: [{ type: 1, payload: new Uint8Array() }] }],
      history: [{ id: 'a', entries: [step] }],
      records: [
        { kind: 'object', key: '["S","k"]', value: { value: 'free' } },
        { kind: 'idem', key: 'x', value: 1 },
      ],
      state: [{ service: 'S', key: 'k', ops: [{ op: 'clearAll' }] }],
      deleteInvocations: ['old'],
    });
    t.deepEqual(changes, [], 'nothing before the commit resolved');
    await committing;
    t.deepEqual(changes, [
      {
        partition: 2,
        invocations: [
          { id: 'a', snapshot: { value: 'suspended' }, history: [step] },
          { id: 'b', history: [] },
        ],
        deleted: ['old'],
        records: [{ kind: 'object', key: '["S","k"]', value: { value: 'free' } }],
        state: [{ service: 'S', key: 'k' }],
      },
    ]);
    t.deepEqual(await store.readHistory(2, 'a'), [step]);
  } finally {
    await cleanup();
  }
});

test('a failed commit and a commit of nothing reported are not reported; unsubscribed listeners hear nothing', async (t) => {
  const { store, changes, cleanup } = await observed();
  try {
    await t.throwsAsync(
      store.commit({
        partition: 0,
        invocations: [{ id: 'a', snapshot: 1, active: true }],
        journal: [{ id: 'a', at: 3, entries: [] }],
      }),
      {
        instanceOf: TransitionConflict,
      },
    );
    await store.commit({
      partition: 0,
      timersAdd: [{ key: 't', dueAt: 1 }],
      records: [{ kind: 'idem', key: 'x', value: 1 }],
    });
    t.deepEqual(changes, []);
    const late: StoreChange[] = [];
    const unsubscribe = store.subscribe((c) => late.push(c));
    unsubscribe();
    await store.commit({ partition: 0, deleteInvocations: ['a'] });
    t.is(changes.length, 1);
    t.deepEqual(late, []);
  } finally {
    await cleanup();
  }
});
