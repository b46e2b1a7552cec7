// SDK services for the web UI's browser tests. Handlers that wait publish their awakeable's
// id as the counter `<tag>:awakeable=<id>` (as context.mjs publishes values), so a test
// resolves it when it wants the invocation to move on: it stays running for the inactivity
// timeout (4 s, long enough for a browser on a loaded machine to see it), then suspends.
//
// Served by serve.mjs (READY/COUNTS ports on stdout).
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { counts, bump } = counters();

async function awaitTest(ctx, tag) {
  const awakeable = ctx.awakeable();
  await ctx.run('publish', () => bump(`${tag}:awakeable=${awakeable.id}`));
  return awakeable.promise;
}

const walker = restate.service({
  name: 'Walker',
  handlers: {
    hello: async (_ctx, name) => `hello ${name}`,
    // running → suspended → (resolved) running for 1.5 s → completed
    walk: async (ctx, tag) => {
      const got = await awaitTest(ctx, tag);
      await ctx.sleep(1500);
      return `walked ${tag} with ${got}`;
    },
    wait: async (ctx, tag) => `waited ${tag}: ${await awaitTest(ctx, tag)}`,
    // Fails with a retryable error twice, then succeeds: a last failure with a stack trace.
    stumble: restate.handlers.handler({ retryPolicy: { initialInterval: 100, maxInterval: 200 } }, async (_ctx, tag) => {
      const attempt = bump(`stumble:${tag}`);
      if (attempt <= 2) throw new Error(`stumbled on attempt ${attempt}`);
      return `up after ${attempt} attempts`;
    }),
  },
  options: { inactivityTimeout: 4000 },
});

const tally = restate.object({
  name: 'Tally',
  handlers: {
    add: async (ctx, n) => {
      const count = ((await ctx.get('count')) ?? 0) + n;
      ctx.set('count', count);
      return count;
    },
    get: restate.handlers.object.shared(async (ctx) => (await ctx.get('count')) ?? 0),
    // Holds the key's lock until the test resolves its awakeable.
    hold: async (ctx, tag) => awaitTest(ctx, tag),
  },
});

const approval = restate.workflow({
  name: 'Approval',
  handlers: {
    run: async (ctx, what) => `${what}: ${await ctx.promise('decision')}`,
    decide: async (ctx, decision) => ctx.promise('decision').resolve(decision),
  },
});

serve(restate.endpoint().bind(walker).bind(tally).bind(approval), { counts });
