// The SDK service of the fault campaign (test/support/faults/). Every execution of every ctx.run
// closure appends one line to the file named by FAULTS_EXECUTIONS, synchronously, so the record
// survives a SIGKILL of this process (the write is in the kernel before the closure returns) and
// a restart appends after it: the file is the order in which closures really ran. Each closure
// returns its execution id, and the handlers return those ids, so the campaign sees which
// execution's result was journaled and used.
//
// Served by serve.mjs (READY port on stdout; PORT pins it for a restart at the same address).
import * as restate from '@restatedev/restate-sdk';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { serve } from './serve.mjs';

const FILE = process.env.FAULTS_EXECUTIONS;
if (!FILE) throw new Error('FAULTS_EXECUTIONS is not set');

/** Runs step `name` durably; the closure records this execution and returns its id. */
function recordedRun(ctx, name, fields) {
  return ctx.run(name, () => {
    const exec = randomUUID();
    appendFileSync(FILE, JSON.stringify({ name, inv: ctx.request().id, exec, at: Date.now(), ...fields }) + '\n');
    return exec;
  });
}

const work = restate.service({
  name: 'Work',
  handlers: {
    step: async (ctx, { op, sleepMs }) => {
      const step = await recordedRun(ctx, 'step', { op });
      if (sleepMs) await ctx.sleep(sleepMs);
      return { op, step };
    },
  },
});

// Read-modify-write with durable awaits between the read and the write: two executions of one
// key at once would both read the same count and one add would be lost. `enter` and `exit`
// bracket the part that must be exclusive.
const counter = restate.object({
  name: 'Counter',
  handlers: {
    add: async (ctx, { op, delta, sleepMs }) => {
      const key = ctx.key;
      const enter = await recordedRun(ctx, 'enter', { op, key });
      const before = (await ctx.get('count')) ?? 0;
      if (sleepMs) await ctx.sleep(sleepMs);
      ctx.set('count', before + delta);
      const exit = await recordedRun(ctx, 'exit', { op, key });
      return { op, before, after: before + delta, enter, exit };
    },
    get: restate.handlers.object.shared(async (ctx) => (await ctx.get('count')) ?? 0),
  },
});

serve(restate.endpoint().bind(work).bind(counter));
