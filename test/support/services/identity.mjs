// An SDK endpoint that only accepts requests signed with the request identity key whose
// public form (`publickeyv1_…`) is in IDENTITY_KEYS (comma-separated), checked by the SDK's own
// verification. A Greeter service and a Counter object (keyed invocations carry a `sub` claim).
// Served under `/` and under the `/prefixed/` path, as a deployment URI with a path would be.
//
// Served by serve.mjs (the READY port on stdout; HTTP1=1 for request/response).
import * as restate from '@restatedev/restate-sdk';
import { serve } from './serve.mjs';

const greeter = restate.service({
  name: 'Greeter',
  handlers: { greet: async (_ctx, name) => `hi ${name}` },
});

const counter = restate.object({
  name: 'Counter',
  handlers: {
    add: async (ctx, delta) => {
      const next = ((await ctx.get('count')) ?? 0) + delta;
      ctx.set('count', next);
      return next;
    },
  },
});

const endpoint = restate
  .endpoint()
  .bind(greeter)
  .bind(counter)
  .withIdentityV1(...process.env.IDENTITY_KEYS.split(','));
serve(endpoint);
