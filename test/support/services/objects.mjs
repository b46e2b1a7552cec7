// SDK services for the virtual-object tests: a counter whose exclusive `add` reads, sleeps and
// writes (so two adds running at once would lose an update), and counts how often an exclusive
// handler of a key started while another invocation of the key was still inside one. A ctx.run
// may run again after a crash (its result was not stored yet), so the check is by invocation id.
// An 'enter' of an invocation whose 'exit' already ran is counted apart, as a stale attempt: a
// node paused mid-write (SIGSTOP) delivers the Start it had written before the pause only when it
// wakes, after the partition's new owner ran the invocation to its end; the SDK runs the step
// again then (ctx.run closures are at least once), but nothing of that attempt can be stored.
//
// Served by serve.mjs (READY/COUNTS ports on stdout; HTTP1=1 for request/response).
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { counts, bump } = counters();
const holders = {};
const exited = new Set();

const counter = restate.object({
  name: 'Counter',
  handlers: {
    add: async (ctx, { delta, pauseMs }) => {
      const key = ctx.key;
      const id = ctx.request().id;
      await ctx.run('enter', () => {
        if (exited.has(id)) return void bump(`stale:${key}`);
        if (holders[key] !== undefined && holders[key] !== id) bump(`overlaps:${key}`);
        holders[key] = id;
      });
      const current = (await ctx.get('count')) ?? 0;
      if (pauseMs) await ctx.sleep(pauseMs);
      ctx.set('count', current + (delta ?? 1));
      await ctx.run('exit', () => {
        if (holders[key] === id) delete holders[key];
        exited.add(id);
        bump(`adds:${key}`);
      });
      return current + (delta ?? 1);
    },
    get: restate.handlers.object.shared(async (ctx) => (await ctx.get('count')) ?? 0),
    // Writes state, then waits on an awakeable whose id goes out through the counters (not a
    // ctx.run: nothing after the write may make the server store it).
    setThenWait: async (ctx, { count, tag }) => {
      ctx.set('count', count);
      const { id, promise } = ctx.awakeable();
      bump(`awk:${tag}=${id}`);
      return { resolvedWith: await promise };
    },
    // The value and the Run command are stored while the run's body still works (3 s).
    setThenRun: async (ctx, { count }) => {
      ctx.set('count', count);
      return ctx.run('slow', () => new Promise((resolve) => setTimeout(() => resolve('ran'), 3000)));
    },
  },
});

// Idempotency and workflow runs: every execution of a body is counted by tag.
const once = restate.service({
  name: 'Once',
  handlers: {
    run: async (ctx, { tag, sleepMs }) => {
      const n = await ctx.run('count', () => bump(`once:${tag}`));
      if (sleepMs) await ctx.sleep(sleepMs);
      return `${tag}:${n}`;
    },
  },
});

const quickWf = restate.workflow({
  name: 'QuickWf',
  handlers: {
    run: async (ctx, input) => {
      const n = await ctx.run('count', () => bump(`wf:${ctx.key}`));
      if (input?.sleepMs) await ctx.sleep(input.sleepMs);
      return `wf ${ctx.key} ${n}`;
    },
    info: async (ctx) => `info ${ctx.key}`,
  },
});

// Awakeables completed from outside (typed clients): the id is published as the counter
// `awk:<tag>=<id>`, and the handler returns what the awakeable was resolved with.
const signals = restate.service({
  name: 'Signals',
  handlers: {
    wait: async (ctx, { tag }) => {
      const { id, promise } = ctx.awakeable();
      await ctx.run('publish', () => bump(`awk:${tag}=${id}`));
      return { resolvedWith: await promise };
    },
  },
});

// Calls from a handler that name an existing invocation: an idempotency key used twice, and a
// workflow id whose run is called twice.
const caller = restate.service({
  name: 'Caller',
  handlers: {
    idemTwice: async (ctx, tag) => {
      const opts = restate.rpc.opts({ idempotencyKey: `from-handler-${tag}` });
      const a = await ctx.serviceClient(once).run({ tag }, opts);
      const b = await ctx.serviceClient(once).run({ tag: 'ignored' }, opts);
      return [a, b];
    },
    wfTwice: async (ctx, key) => {
      const first = await ctx.workflowClient(quickWf, key).run({});
      try {
        await ctx.workflowClient(quickWf, key).run({});
        return [first, 'no error'];
      } catch (e) {
        return [first, `${e.code} ${e.message}`];
      }
    },
  },
});

serve(restate.endpoint().bind(counter).bind(once).bind(quickWf).bind(signals).bind(caller), { counts });
