// SDK services for the flow-control tests (test/e2e/flow-control.test.ts). `Flow.work` holds
// its place between two ctx.run steps, around a durable sleep; the service counts how many are
// between the two at once (a Set, so a step run again after a crash counts once) and when each
// one started.
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { counts, bump } = counters();
const active = new Set();
const started = [];
counts.maxActive = 0;
counts.started = started;

const flow = restate.service({
  name: 'Flow',
  handlers: {
    work: async (ctx, { tag, ms }) => {
      await ctx.run('start', () => {
        active.add(tag);
        counts.maxActive = Math.max(counts.maxActive, active.size);
        started.push({ tag, at: Date.now() });
        bump(`${tag}:start`);
      });
      await ctx.sleep(ms);
      await ctx.run('end', () => {
        active.delete(tag);
        bump(`${tag}:end`);
      });
      return tag;
    },
  },
});

const flowWf = restate.workflow({
  name: 'FlowWf',
  handlers: {
    run: async (_ctx, input) => `run ${input}`,
  },
});

const flowObj = restate.object({
  name: 'FlowObj',
  handlers: {
    add: async (ctx, n) => {
      const next = ((await ctx.get('count')) ?? 0) + n;
      ctx.set('count', next);
      return next;
    },
  },
});

serve(restate.endpoint().bind(flow).bind(flowWf).bind(flowObj), { counts });
