// A small Restate SDK endpoint for discovery, registry and end-to-end tests.
//
// Served by serve.mjs (the READY port on stdout).
// env HTTP1=1     serve HTTP/1.1 request-response (http1Handler) instead of h2c bidi
//
// Paths: `/` serves the main set (Greeter, Counter, Signup). Variants for re-registration
// tests live under prefixes, so one process can play several deployments:
//   /v2/          the main set plus Greeter/extra
//   /var/         VarSvc as a Service (handler a)
//   /var-object/  VarSvc as a VirtualObject (handler a): a service type change
import * as restate from '@restatedev/restate-sdk';
import { serve } from './serve.mjs';

function mainServices(extra) {
  const greeterHandlers = {
    greet: async (_ctx, name) => `hi ${name}`,
    // Not callable through the ingress: only from other services.
    secret: restate.handlers.handler({ ingressPrivate: true }, async () => 'secret'),
    // Always fails; 3 attempts 100..200 ms apart, then the invocation is killed.
    retrying: restate.handlers.handler(
      { retryPolicy: { maxAttempts: 3, onMaxAttempts: 'kill', initialInterval: 100, maxInterval: 200 } },
      async () => {
        throw new Error('always fails');
      },
    ),
  };
  if (extra) greeterHandlers.extra = async () => 'extra';
  const greeter = restate.service({ name: 'Greeter', handlers: greeterHandlers });

  const counter = restate.object({
    name: 'Counter',
    handlers: {
      add: async (ctx, delta) => {
        const next = ((await ctx.get('count')) ?? 0) + (delta ?? 1);
        ctx.set('count', next);
        return next;
      },
      get: restate.handlers.object.shared(async (ctx) => (await ctx.get('count')) ?? 0),
    },
  });

  const signup = restate.workflow({
    name: 'Signup',
    handlers: {
      run: async (ctx, email) => {
        ctx.set('status', 'waiting');
        const code = await ctx.promise('verified').get();
        ctx.set('status', 'verified');
        return `ok ${email} ${code}`;
      },
      verify: async (ctx, code) => {
        await ctx.promise('verified').resolve(code ?? 'yes');
        return 'resolved';
      },
      status: async (ctx) => (await ctx.get('status')) ?? 'none',
    },
  });
  return [greeter, counter, signup];
}

const http1 = process.env.HTTP1 === '1';

function handlerFor(services) {
  const ep = restate.endpoint();
  for (const s of services) ep.bind(s);
  return http1 ? ep.http1Handler() : ep.http2Handler();
}

const routes = [
  ['/v2/', handlerFor(mainServices(true))],
  ['/var/', handlerFor([restate.service({ name: 'VarSvc', handlers: { a: async () => 'a' } })])],
  ['/var-object/', handlerFor([restate.object({ name: 'VarSvc', handlers: { a: async () => 'a-object' } })])],
];
const main = handlerFor(mainServices(false));

function dispatch(req, res) {
  const route = routes.find(([prefix]) => req.url.startsWith(prefix));
  return (route ? route[1] : main)(req, res);
}

serve(undefined, { handler: dispatch });
