/**
 * The embedded store's remembered journal lengths and history numbers follow only the write
 * transactions that commit (src/store/embedded/positions.ts); the store's contract tests cover
 * refused commits and reopening, this covers a transaction that is aborted as a whole.
 */
import test from 'ava';
import { Positions } from '../../src/store/embedded/positions.js';

test('staged positions are seen inside the transaction, kept when it commits and dropped when it aborts', (t) => {
  const positions = new Positions();
  positions.stage(1, 'a', { journal: 2 });
  positions.stage(1, 'a', { history: 0 });
  t.deepEqual(positions.get(1, 'a'), { journal: 2, history: 0 });
  t.is(positions.get(2, 'a'), undefined, 'per partition');
  positions.keep();
  positions.stage(1, 'a', { journal: 5, history: 3 });
  positions.forget(1, 'b');
  positions.drop();
  t.deepEqual(positions.get(1, 'a'), { journal: 2, history: 0 });
  positions.forget(1, 'a');
  t.is(positions.get(1, 'a'), undefined, 'forgotten inside the transaction');
  positions.keep();
  t.is(positions.get(1, 'a'), undefined);
});
