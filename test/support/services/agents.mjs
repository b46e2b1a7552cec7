// The services an agent drives through the MCP endpoint (test/e2e/mcp.test.ts): a plain
// service with a call tree and an awakeable, and a virtual object with state.
// Awakeable ids are published as counters (`awakeable:<tag>`), read on the COUNTS port.
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { counts } = counters();

const greeter = restate.service({
  name: 'Greeter',
  handlers: {
    greet: async (_ctx, name) => `hi ${name}`,
    sleepy: async (ctx, ms) => {
      await ctx.sleep(ms);
      return `slept ${ms}`;
    },
    // Calls a long sleeper: a call tree for describe's caller and callees.
    parent: async (ctx, ms) => ctx.serviceClient(greeter).sleepy(ms),
    // Waits for whoever completes its awakeable.
    approval: async (ctx, tag) => {
      const awakeable = ctx.awakeable();
      await ctx.run('publish', () => {
        counts[`awakeable:${tag}`] = awakeable.id;
      });
      return await awakeable.promise;
    },
  },
});

const cart = restate.object({
  name: 'Cart',
  handlers: {
    add: async (ctx, item) => {
      const items = [...((await ctx.get('items')) ?? []), item];
      ctx.set('items', items);
      return items;
    },
    items: restate.handlers.object.shared(async (ctx) => (await ctx.get('items')) ?? []),
  },
});

serve(restate.endpoint().bind(greeter).bind(cart), { counts });
