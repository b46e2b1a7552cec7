// SDK services for the tests of issue 15 (test/e2e/signals.test.ts, cancel-unstarted.test.ts,
// large-input.test.ts, lineage.test.ts, cli-queries.test.ts): named signals between handlers,
// cancelling delayed one-way calls before they start, a binary echo for large inputs, and a
// caller that makes every kind of child (call, send, delayed send, workflow run) for the
// lineage columns. Written for redstate after reading the SDK's own e2e services; side
// effects inside ctx.run bump counters a test reads.
//
// Served by serve.mjs (READY/COUNTS ports on stdout).
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { RestatePromise, TimeoutError, InvocationIdParser, rpc, serde } = restate;
const { counts, bump } = counters();

const failureOf = (e) => ({ code: e.code, message: e.message });
const target = (ctx, id) => ctx.invocation(InvocationIdParser.fromString(id));

/** Runs `wait` and reports its value or its rejection, then bumps `<tag>:done`. */
async function report(ctx, tag, wait) {
  let outcome;
  try {
    outcome = { value: await wait() };
  } catch (e) {
    outcome = { rejected: failureOf(e) };
  }
  await ctx.run('done', () => bump(`${tag}:done`));
  return outcome;
}

// --- named signals ------------------------------------------------------------------------------

const waiterHandlers = {
  /** Waits for one named signal, after a sleep of `beforeMs` (the signal may come first). */
  one: async (ctx, { tag, name, beforeMs }) => {
    await ctx.run('started', () => bump(`${tag}:started`));
    if (beforeMs) await ctx.sleep(beforeMs);
    return report(ctx, tag, () => ctx.signal(name));
  },
  /** Waits for two named signals at once (all). */
  both: async (ctx, { tag }) => {
    await ctx.run('started', () => bump(`${tag}:started`));
    return report(ctx, tag, () => RestatePromise.all([ctx.signal('a'), ctx.signal('b')]));
  },
  /** The first of two named signals (race). */
  first: async (ctx, { tag }) => {
    await ctx.run('started', () => bump(`${tag}:started`));
    return report(ctx, tag, () => RestatePromise.race([ctx.signal('a'), ctx.signal('b')]));
  },
  /** Both outcomes, whatever they are (allSettled). */
  settled: async (ctx, { tag }) => {
    await ctx.run('started', () => bump(`${tag}:started`));
    return report(ctx, tag, async () => {
      const all = await RestatePromise.allSettled([ctx.signal('a'), ctx.signal('b')]);
      return all.map((s) => (s.status === 'fulfilled' ? { value: s.value } : { rejected: failureOf(s.reason) }));
    });
  },
  /** A named signal racing a timeout. */
  orTimeout: async (ctx, { tag, name, timeoutMs }) => {
    await ctx.run('started', () => bump(`${tag}:started`));
    return report(ctx, tag, async () => {
      try {
        return await ctx.signal(name).orTimeout(timeoutMs);
      } catch (e) {
        if (e instanceof TimeoutError) return 'timeout';
        throw e;
      }
    });
  },
};

// The same handlers twice: streaming (the signal arrives while the stream is open), and with a
// short inactivity timeout, so every wait is a suspension and the signal resumes the invocation.
const waiter = restate.service({ name: 'SignalWaiter', handlers: waiterHandlers });
const suspendingWaiter = restate.service({
  name: 'SuspendingSignalWaiter',
  handlers: waiterHandlers,
  options: { inactivityTimeout: 100 },
});

const signaller = restate.service({
  name: 'Signaller',
  handlers: {
    resolve: async (ctx, { id, name, value }) => target(ctx, id).signal(name).resolve(value),
    reject: async (ctx, { id, name, reason }) => target(ctx, id).signal(name).reject(reason),
    /** Several signals from one handler, in order. */
    many: async (ctx, { id, signals }) => {
      for (const s of signals) {
        const ref = target(ctx, s.id ?? id).signal(s.name);
        if (s.reason !== undefined) ref.reject(s.reason);
        else ref.resolve(s.value);
      }
    },
  },
});

// --- cancelling what has not started ------------------------------------------------------------

const scheduled = restate.service({
  name: 'Scheduled',
  handlers: {
    /** Counts its executions: a cancelled one must never run. */
    work: async (ctx, tag) => {
      await ctx.run('ran', () => bump(`${tag}:ran`));
      return `worked ${tag}`;
    },
    /** A delayed send, cancelled at once by the same handler (a batcher cancelling its flush timer). */
    sendThenCancel: async (ctx, { tag, delayMs }) => {
      const id = await ctx.serviceSendClient(scheduled).work(tag, rpc.sendOpts({ delay: delayMs })).invocationId;
      target(ctx, id).cancel();
      return id;
    },
    /** A delayed send whose id the caller cancels later. */
    sendLater: async (ctx, { tag, delayMs }) =>
      ctx.serviceSendClient(scheduled).work(tag, rpc.sendOpts({ delay: delayMs })).invocationId,
    cancel: async (ctx, id) => target(ctx, id).cancel(),
  },
});

/** One key's lock held until a named signal: what comes after it waits in the key's inbox. */
const queue = restate.object({
  name: 'Queue',
  handlers: {
    hold: async (ctx, name) => ctx.signal(name),
    after: async (ctx, tag) => {
      await ctx.run('ran', () => bump(`${tag}:ran`));
      return `after ${tag}`;
    },
  },
});

// --- large inputs -------------------------------------------------------------------------------

const echo = restate.service({
  name: 'Echo',
  handlers: {
    bytes: restate.handlers.handler({ input: serde.binary, output: serde.binary }, async (_ctx, input) => input),
    length: restate.handlers.handler({ input: serde.binary }, async (_ctx, input) => input.length),
  },
});

// --- lineage: every kind of child ---------------------------------------------------------------

const child = restate.service({
  name: 'Child',
  handlers: {
    hello: async (_ctx, from) => `hello from ${from}`,
    fail: async () => {
      throw new restate.TerminalError('child refused', { errorCode: 418 });
    },
    // Fails, and waits a minute before each retry: backing-off for the CLI's list.
    flaky: restate.handlers.handler({ retryPolicy: { initialInterval: 60_000, maxInterval: 60_000 } }, async () => {
      throw new Error('flaky child');
    }),
    // Fails once, then waits for an operator: paused.
    pauses: restate.handlers.handler({ retryPolicy: { maxAttempts: 1, onMaxAttempts: 'pause' } }, async () => {
      throw new Error('pausing child');
    }),
  },
});

const childObject = restate.object({
  name: 'ChildObject',
  handlers: {
    hello: async (ctx, from) => `hello ${ctx.key} from ${from}`,
  },
});

const childWorkflow = restate.workflow({
  name: 'ChildWorkflow',
  handlers: {
    run: async (ctx, from) => `run ${ctx.key} from ${from}`,
  },
});

const parent = restate.object({
  name: 'Parent',
  handlers: {
    /** One child of each kind; answers their ids. */
    spawn: async (ctx, { delayMs }) => {
      const call = ctx.serviceClient(child).hello('call');
      const ids = { call: await call.invocationId };
      await call;
      ids.send = await ctx.serviceSendClient(child).hello('send').invocationId;
      ids.delayed = await ctx.serviceSendClient(child).hello('delayed', rpc.sendOpts({ delay: delayMs })).invocationId;
      ids.objectSend = await ctx.objectSendClient(childObject, 'k').hello('objectSend').invocationId;
      const run = ctx.workflowClient(childWorkflow, ctx.key).run('workflow');
      ids.workflow = await run.invocationId;
      await run;
      return ids;
    },
  },
});

const endpoint = restate.endpoint();
for (const s of [
  waiter,
  suspendingWaiter,
  signaller,
  scheduled,
  queue,
  echo,
  child,
  childObject,
  childWorkflow,
  parent,
])
  endpoint.bind(s);
serve(endpoint, { counts });
