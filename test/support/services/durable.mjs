// SDK services for the end-to-end tests of durable execution. Every side effect inside a
// ctx.run bumps a counter, so tests can check that each step ran exactly once, also across
// a SIGKILL of the server.
//
// Served by serve.mjs (READY/COUNTS ports on stdout; HTTP1=1 for request/response).
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { counts, bump } = counters();

const durable = restate.service({
  name: 'Durable',
  handlers: {
    greet: async (_ctx, name) => `hi ${name}`,
    noInput: async () => 'no input',
    // Three steps, then a durable sleep, then a result built from the journaled step values.
    steps: async (ctx, { tag, sleepMs }) => {
      const a = await ctx.run('a', () => bump(`${tag}:a`));
      const b = await ctx.run('b', () => bump(`${tag}:b`));
      const c = await ctx.run('c', () => bump(`${tag}:c`));
      await ctx.sleep(sleepMs ?? 0);
      bump(`${tag}:done`);
      return `${tag}:${a}${b}${c}`;
    },
    // Calls a long sleeper and records the child's id, for cancel/kill of a call tree.
    parent: async (ctx, { tag, ms }) => {
      const child = ctx.serviceClient(durable).sleepy(ms);
      const childId = await child.invocationId;
      await ctx.run('child', () => {
        counts[`child:${tag}`] = childId;
      });
      return await child;
    },
    // Not callable through the ingress, only from another handler.
    secret: restate.handlers.handler({ ingressPrivate: true }, async () => 'secret'),
    callSecret: async (ctx) => `got ${await ctx.serviceClient(durable).secret()}`,
    // An idempotency key deduplicates this one for one second only.
    shortDedup: restate.handlers.handler({ idempotencyRetention: 1000 }, async (ctx, tag) =>
      ctx.run('count', () => bump(`dedup:${tag}`)),
    ),
    // Works `ms` before its first journal entry (as a request outside ctx.run would).
    slowStart: async (_ctx, ms) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return `started after ${ms}`;
    },
    sleepy: async (ctx, ms) => {
      await ctx.sleep(ms);
      return `slept ${ms}`;
    },
    fail: async () => {
      throw new restate.TerminalError('terminal boom', { errorCode: 418, metadata: { why: 'test' } });
    },
    failDefault: async () => {
      throw new restate.TerminalError('terminal default code');
    },
    // Fails with a retryable error `times` times, counted per tag, then succeeds.
    flaky: async (_ctx, { tag, times }) => {
      const attempt = bump(`${tag}:attempt`);
      if (attempt <= times) throw new Error(`flaky failure attempt ${attempt}`);
      return `ok after ${attempt}`;
    },
    alwaysFailKill: restate.handlers.handler(
      { retryPolicy: { maxAttempts: 3, onMaxAttempts: 'kill', initialInterval: 50, maxInterval: 100 } },
      async () => {
        throw new Error('always fails (kill)');
      },
    ),
    bytes: restate.handlers.handler(
      { input: restate.serde.binary, output: restate.serde.binary },
      async (_ctx, input) => new Uint8Array([...input].reverse()),
    ),
  },
});

// The same steps with a short inactivity timeout: the server closes the request while the
// handler sleeps, so the SDK suspends and a second attempt replays the journal.
const suspender = restate.service({
  name: 'Suspender',
  handlers: {
    steps: async (ctx, { tag, sleepMs }) => {
      const a = await ctx.run('a', () => bump(`${tag}:a`));
      await ctx.sleep(sleepMs);
      const b = await ctx.run('b', () => bump(`${tag}:b`));
      return `${tag}:${a}${b}:${ctx.rand.uuidv4().length}`;
    },
  },
  options: { inactivityTimeout: 200 },
});

// Reads, writes and returns, as the benchmark's object does: its commits are counted.
const tally = restate.object({
  name: 'Tally',
  handlers: {
    add: async (ctx, delta) => {
      const n = ((await ctx.get('n')) ?? 0) + delta;
      ctx.set('n', n);
      return n;
    },
  },
});

serve(restate.endpoint().bind(durable).bind(suspender).bind(tally), { counts });
