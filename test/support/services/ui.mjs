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
    // A durable sleep of `ms`: a timer the waiting page lists.
    nap: async (ctx, ms) => {
      await ctx.sleep(ms);
      return `napped ${ms}`;
    },
    // Fails with a retryable error twice, then succeeds: a last failure with a stack trace.
    stumble: restate.handlers.handler(
      { retryPolicy: { initialInterval: 100, maxInterval: 200 } },
      async (_ctx, tag) => {
        const attempt = bump(`stumble:${tag}`);
        if (attempt <= 2) throw new Error(`stumbled on attempt ${attempt}`);
        return `up after ${attempt} attempts`;
      },
    ),
  },
  options: { inactivityTimeout: 4000 },
});

// An order as a user writes one: steps, a durable sleep, a call that calls again, and a
// one-way send; its input has a JSON schema (the playground's example body comes from it).
const orderSchema = {
  type: 'object',
  properties: {
    item: { type: 'string', examples: ['book'] },
    quantity: { type: 'integer', minimum: 1 },
    gift: { type: 'boolean' },
  },
  required: ['item', 'quantity'],
};

const shipping = restate.service({
  name: 'Shipping',
  handlers: {
    ship: async (ctx, item) => {
      const label = await ctx.serviceClient(walker).hello(item);
      await ctx.run('print label', () => label);
      return `shipped ${item}`;
    },
  },
});

const orders = restate.service({
  name: 'Orders',
  handlers: {
    place: restate.handlers.handler({ input: new restate.serde.JsonSerde(orderSchema) }, async (ctx, order) => {
      await ctx.run('reserve', () => `reserved ${order.quantity} ${order.item}`);
      await ctx.sleep(300);
      const shipped = await ctx.serviceClient(shipping).ship(order.item);
      ctx.serviceSendClient(walker).hello(`mail about ${order.item}`);
      await ctx.run('charge', () => 'charged');
      return shipped;
    }),
    // Retries for as long as the test lets it, a minute apart: each attempt fails its own way.
    forever: restate.handlers.handler(
      { retryPolicy: { initialInterval: 60_000, maxInterval: 60_000 } },
      async (_ctx, tag) => {
        throw new Error(`attempt ${bump(`forever:${tag}`)} of ${tag} failed`);
      },
    ),
    refuse: async (_ctx, why) => {
      throw new restate.TerminalError(`refused: ${why}`, { errorCode: 422 });
    },
  },
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

serve(restate.endpoint().bind(walker).bind(tally).bind(approval).bind(orders).bind(shipping), { counts });
