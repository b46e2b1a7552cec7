// SDK services for the schedule tests (test/e2e/schedules.test.ts): each records the fire time
// it was started for (the x-restate-schedule-fire-time header) once per invocation, in a
// ctx.run, so a test sees which fire times ran and how often.
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { counts, bump } = counters();
const fireTime = (ctx) => ctx.request().headers.get('x-restate-schedule-fire-time') ?? 'none';
const record = (ctx, tag) => ctx.run('record', () => bump(`${tag}|${fireTime(ctx)}`));

const ticks = restate.object({
  name: 'Ticks',
  handlers: {
    tick: async (ctx, input) => {
      await record(ctx, `tick:${ctx.key}`);
      const n = ((await ctx.get('n')) ?? 0) + (input ?? 1);
      ctx.set('n', n);
      return n;
    },
  },
});

const slow = restate.service({
  name: 'Slow',
  handlers: {
    // Runs `ms` (a durable sleep), so the next fire finds it still going.
    work: async (ctx, ms) => {
      await record(ctx, 'slow');
      await ctx.sleep(ms ?? 0);
      return 'done';
    },
  },
});

const report = restate.workflow({
  name: 'Report',
  handlers: {
    run: async (ctx) => {
      await record(ctx, 'report');
      return ctx.key;
    },
  },
});

serve(restate.endpoint().bind(ticks).bind(slow).bind(report), { counts });
