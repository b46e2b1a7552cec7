// A workflow whose run waits on a durable promise that its shared handlers resolve, reject
// or peek (service-protocol.md §9.7).
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { counts, bump } = counters();

const signup = restate.workflow({
  name: 'Signup',
  handlers: {
    run: async (ctx, email) => {
      await ctx.run('started', () => bump(`started:${ctx.key}`));
      ctx.set('status', 'waiting');
      const code = await ctx.promise('verified').get();
      ctx.set('status', 'verified');
      return `ok ${email} ${code}`;
    },
    verify: async (ctx, code) => {
      await ctx.promise('verified').resolve(code);
      return 'resolved';
    },
    refuse: async (ctx, why) => {
      await ctx.promise('verified').reject(why);
      return 'rejected';
    },
    peek: async (ctx) => (await ctx.promise('verified').peek()) ?? null,
    status: async (ctx) => (await ctx.get('status')) ?? 'none',
  },
});

serve(restate.endpoint().bind(signup), { counts });
