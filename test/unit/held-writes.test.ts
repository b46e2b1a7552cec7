/**
 * A read of a key's state never misses the state writes an attempt holds back for that key: it
 * has them committed first. Other keys' reads do not wait, and a failed commit leaves the
 * reader with what is stored.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EmbeddedStore } from '../../src/store/embedded/embedded-store.js';
import { HeldWrites } from '../../src/store/held-writes.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => (b ? new TextDecoder().decode(b) : undefined);

test('reads of a key settle the writes held for it, and only for it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-held-'));
  const inner = await EmbeddedStore.open(dir);
  try {
    const held = new HeldWrites();
    const store = held.reading(inner);
    let released = 0;
    const unhold = held.hold(3, 'Counter', 'a', async () => {
      released++;
      unhold();
      await inner.commit({
        partition: 3,
        state: [{ service: 'Counter', key: 'a', ops: [{ op: 'set', key: 'count', value: utf8('42') }] }],
      });
    });

    t.is(text(await store.readStateKey(3, 'Counter', 'b', 'count')), undefined);
    t.is(released, 0, 'another key does not release the held writes');
    t.is(text(await store.readStateKey(3, 'Counter', 'a', 'count')), '42');
    t.is(released, 1);
    t.is(text((await store.readState(3, 'Counter', 'a')).get('count')), '42');
    t.is(released, 1, 'once committed, nothing is held');

    held.hold(3, 'Counter', 'c', () => Promise.reject(new Error('commit failed')));
    t.deepEqual(
      [...(await store.readState(3, 'Counter', 'c')).keys()],
      [],
      'a failed commit: the reader sees what is stored',
    );
  } finally {
    await inner.close();
    await rm(dir, { recursive: true, force: true });
  }
});
