// Sleeping invocations for scripts/scale-sleepers.mjs: each sleeps, then counts its number once
// per execution that got past the sleep (more than one would mean it ran twice).
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { counts, bump } = counters();

const sleeper = restate.service({
  name: 'Sleeper',
  handlers: {
    sleep: async (ctx, { i, ms }) => {
      await ctx.sleep(ms);
      bump(String(i));
    },
  },
  // Suspend one second into the sleep (the default is a minute): the point is many suspended.
  options: { inactivityTimeout: 1000 },
});

serve(restate.endpoint().bind(sleeper), { counts });
