// Handlers that misbehave on their first attempt, for the server's inactivity and abort
// timeouts (service-protocol.md §11) and for an endpoint that dies mid-attempt.
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { counts, bump } = counters();

const flaky = restate.service({
  name: 'Flaky',
  handlers: {
    // First attempt: awaits something the SDK cannot suspend on, so it never ends by itself.
    hangOnce: async (_ctx, tag) => {
      if (bump(`${tag}:attempt`) === 1) await new Promise(() => {});
      return `recovered ${tag}`;
    },
    // Journals a run on its first execution and a sleep on every later one: the replay after
    // the suspension no longer matches the journal (the SDK's error 570).
    nondeterministic: restate.handlers.handler(
      { retryPolicy: { maxAttempts: 2, onMaxAttempts: 'pause', initialInterval: 50, maxInterval: 50 } },
      async (ctx, tag) => {
        if (bump(`${tag}:exec`) === 1) await ctx.run('first', () => 1);
        else await ctx.sleep(10);
        await ctx.sleep(1000);
        return 'unreachable';
      },
    ),
    // Exits the whole endpoint process in the middle of its first attempt.
    dieOnce: async (ctx, tag) => {
      await ctx.run('before', () => bump(`${tag}:before`));
      if (process.env.DIE === '1' && bump(`${tag}:attempt`) === 1) process.exit(1);
      return `survived ${tag}`;
    },
  },
  options: { inactivityTimeout: 200, abortTimeout: 300 },
});

serve(restate.endpoint().bind(flaky), { counts });
