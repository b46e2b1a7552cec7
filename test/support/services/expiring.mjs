// SDK services for the state TTL tests (test/e2e/state-ttl.test.ts): a virtual object whose
// handlers write, read, or hold the key's lock without writing, and a plain service (which has
// no state, so no TTL).
import * as restate from '@restatedev/restate-sdk';
import { serve } from './serve.mjs';

const bag = restate.object({
  name: 'Bag',
  handlers: {
    // Three entries at once, so a half-cleared state would show.
    put: async (ctx, value) => {
      for (const k of ['a', 'b', 'c']) ctx.set(k, value);
      return value;
    },
    // The same write; its TTL is overridden per handler in the tests.
    putLong: async (ctx, value) => {
      ctx.set('a', value);
      return value;
    },
    // Holds the key's lock for `ms` and writes nothing.
    hold: async (ctx, ms) => {
      await ctx.sleep(ms);
      return (await ctx.get('a')) ?? null;
    },
    get: restate.handlers.object.shared(async (ctx) => (await ctx.get('a')) ?? null),
  },
});

const plain = restate.service({ name: 'Plain', handlers: { ping: async () => 'pong' } });

serve(restate.endpoint().bind(bag).bind(plain));
