// Services built on Restate's packages beyond the core SDK, written as their READMEs write them:
// a state machine of @restatedev/xstate (a virtual object `auth` driven at /auth/{key}/send), and
// zod-typed handlers of @restatedev/restate-sdk-zod. The reference's answers to these services,
// and its OpenAPI documents of them, are test/fixtures/ecosystem/ (captured on restate-server
// 1.7.12): change a handler here and capture them again.
//
// Served by serve.mjs (READY port on stdout).
import * as restate from '@restatedev/restate-sdk';
import { serde } from '@restatedev/restate-sdk-zod';
import { xstate } from '@restatedev/xstate';
import { fromPromise } from '@restatedev/xstate/promise';
import { setup } from 'xstate';
import { z } from 'zod';
import { serve } from './serve.mjs';

// idle --AUTH--> authorising (a promise actor, run in the object's shared handler)
//   --done--> authorised --500 ms--> done (final); CANCEL goes back to idle.
const authMachine = setup({
  actors: {
    authorise: fromPromise(async ({ input }) => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return `token-for-${input.user}`;
    }),
  },
}).createMachine({
  id: 'auth',
  context: ({ input }) => ({ user: input?.user ?? 'anonymous', token: null }),
  initial: 'idle',
  states: {
    idle: { on: { AUTH: 'authorising' } },
    authorising: {
      tags: ['busy'],
      invoke: {
        src: 'authorise',
        input: ({ context }) => ({ user: context.user }),
        onDone: { target: 'authorised', actions: ({ context, event }) => void (context.token = event.output) },
        onError: 'idle',
      },
      on: { CANCEL: 'idle' },
    },
    authorised: { after: { 500: 'done' } },
    done: { type: 'final' },
  },
});

const Greeting = z.object({ name: z.string() });
const Person = z.object({ name: z.string(), age: z.number() }).meta({ title: 'Person' });

const greeter = restate.service({
  name: 'ZGreeter',
  handlers: {
    greet: restate.handlers.handler(
      { input: serde.zod(Greeting), output: serde.zod(z.string()) },
      async (_ctx, { name }) => `Hello ${name}!`,
    ),
    lengths: restate.handlers.handler(
      {
        input: serde.zod(z.array(z.string())),
        output: serde.zod(z.array(z.number())),
        description: 'The length of each word',
      },
      async (_ctx, words) => words.map((w) => w.length),
    ),
    age: restate.handlers.handler(
      { input: serde.zod(Person), output: serde.zod(z.number()) },
      async (_ctx, person) => person.age,
    ),
    ready: restate.handlers.handler({ output: serde.zod(z.boolean()) }, async () => true),
    plain: async (_ctx, value) => value,
  },
});

const Tally = z.object({ by: z.number().int().positive() });

const counter = restate.object({
  name: 'ZCounter',
  handlers: {
    add: restate.handlers.object.exclusive(
      { input: serde.zod(Tally), output: serde.zod(z.number()) },
      async (ctx, { by }) => {
        const next = ((await ctx.get('count')) ?? 0) + by;
        ctx.set('count', next);
        return next;
      },
    ),
    get: restate.handlers.object.shared(
      { output: serde.zod(z.number()) },
      async (ctx) => (await ctx.get('count')) ?? 0,
    ),
  },
});

serve(restate.endpoint().bind(xstate('auth', authMachine)).bind(greeter).bind(counter));
