// SDK services for the subscription tests: `Log/append` appends each message it is invoked
// with to its key's list (so a message handled twice, or out of order, shows in the list),
// and keeps the invocation headers of the latest message; `Log/get` reads both.
//
// Served by serve.mjs (READY port on stdout).
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { counts } = counters();
/** Ms from the broker taking each message (its `kafka.timestamp`) to the benchmark's handler running. */
counts.lags = [];

const log = restate.object({
  name: 'Log',
  handlers: {
    append: async (ctx, message) => {
      const items = (await ctx.get('items')) ?? [];
      items.push(message);
      ctx.set('items', items);
      ctx.set('headers', Object.fromEntries(ctx.request().headers));
    },
    get: restate.handlers.object.shared(async (ctx) => ({
      items: (await ctx.get('items')) ?? [],
      headers: (await ctx.get('headers')) ?? {},
    })),
  },
});

// The benchmark's sink (scripts/bench-subscriptions.mjs): does nothing but note how late it runs,
// so what is measured is the path from the stream to the handler.
const noop = restate.object({
  name: 'Noop',
  handlers: {
    take: async (ctx) => {
      counts.lags.push(Date.now() - Number(ctx.request().headers.get('kafka.timestamp')));
    },
  },
});

serve(restate.endpoint().bind(log).bind(noop), { counts });
