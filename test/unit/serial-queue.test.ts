import test from 'ava';
import { HandOffQueue } from '../../src/serial-queue.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('a hand-off queue runs jobs in order, each once the one before ended or handed off', async (t) => {
  const queue = new HandOffQueue();
  const events: string[] = [];
  let endFirst!: () => void;
  const first = queue.run(async (handOff) => {
    events.push('first starts');
    handOff();
    await new Promise<void>((resolve) => (endFirst = resolve));
    events.push('first ends');
  });
  let endSecond!: () => void;
  const second = queue.run(async () => {
    events.push('second starts');
    await new Promise<void>((resolve) => (endSecond = resolve));
    events.push('second ends');
  });
  const third = queue.run(async () => {
    events.push('third starts');
  });
  await tick();
  t.deepEqual(events, ['first starts', 'second starts'], 'the second started after the hand-off, the third waits');
  endFirst();
  await first;
  await tick();
  t.false(events.includes('third starts'), 'the second neither ended nor handed off');
  endSecond();
  await Promise.all([second, third]);
  t.deepEqual(events, ['first starts', 'second starts', 'first ends', 'second ends', 'third starts']);
});

test('a job that fails lets the next one run', async (t) => {
  const queue = new HandOffQueue();
  await t.throwsAsync(
    queue.run(async () => {
      throw new Error('boom');
    }),
    { message: 'boom' },
  );
  t.is(await queue.run(async () => 'next'), 'next');
});
