// SDK services for the end-to-end tests of every context operation (test/e2e/context-ops.test.ts,
// test/e2e/context-crash.test.ts). Side effects inside ctx.run bump a counter, so tests can
// check that each ran exactly once. Values a test must learn while a handler is still running
// (an awakeable id, what ctx.rand gave on each execution) are published as counters named
// `<tag>:<name>=<value>`: the counter says how many executions saw that value.
//
// Served by serve.mjs (READY/COUNTS ports on stdout; HTTP1=1 for request/response).
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { RestatePromise, TerminalError, rpc, serde } = restate;

const { counts, bump } = counters();
const publish = (tag, name, value) => bump(`${tag}:${name}=${value}`);
const failureOf = (e) => ({ terminal: e instanceof TerminalError, code: e.code, message: e.message });

// --- the callee of calls and sends ------------------------------------------------------------

const callee = restate.service({
  name: 'Callee',
  handlers: {
    echo: async (_ctx, x) => ({ echo: x }),
    reverse: restate.handlers.handler(
      { input: serde.binary, output: serde.binary },
      async (_ctx, bytes) => new Uint8Array([...bytes].reverse()),
    ),
    fail: async (_ctx, { code, message }) => {
      throw new TerminalError(message, { errorCode: code });
    },
    // When it ran: the test compares it with the sender's clock for delayed sends.
    stamp: async (ctx, tag) => {
      await ctx.run('stamp', () => bump(`${tag}:stamp`));
      return ctx.date.now();
    },
    // Two steps around a durable sleep: the window in which crash tests kill the server.
    slow: async (ctx, { tag, sleepMs }) => {
      await ctx.run('a', () => bump(`${tag}:callee-a`));
      await ctx.sleep(sleepMs);
      await ctx.run('b', () => bump(`${tag}:callee-b`));
      return `slow ${tag}`;
    },
  },
});

// --- ctx.run ------------------------------------------------------------------------------------

const runs = restate.service({
  name: 'Runs',
  handlers: {
    ok: async (ctx, tag) => {
      const a = await ctx.run('a', () => bump(`${tag}:a`));
      const b = await ctx.run('b', async () => ({ n: bump(`${tag}:b`), nested: [1, 'two'] }));
      return { a, b };
    },
    // The closure's TerminalError is stored as the run's result and fails the handler.
    terminal: async (ctx, tag) => {
      await ctx.run('refuse', () => {
        bump(`${tag}:refuse`);
        throw new TerminalError('closure refused', { errorCode: 422 });
      });
      return 'unreachable';
    },
    // Retryable failures are retried through attempts (§10) until the SDK's own limit turns
    // them into a terminal failure of the run.
    retryThenGiveUp: async (ctx, tag) => {
      try {
        await ctx.run(
          'flaky',
          () => {
            throw new Error(`transient failure ${bump(`${tag}:try`)}`);
          },
          { maxRetryAttempts: 2, initialRetryInterval: 10 },
        );
        return 'unreachable';
      } catch (e) {
        return failureOf(e);
      }
    },
  },
});

// --- sleeps, awakeables and combinators ---------------------------------------------------------
// A short inactivity timeout makes every wait below a suspension, so the server, not the
// SDK, decides when a combinator can go on (§11).

const later = (ctx, ms, value) => ctx.sleep(ms).map(() => value);

const combinators = restate.service({
  name: 'Combinators',
  handlers: {
    sleeps: async (ctx) => {
      const race = await RestatePromise.race([later(ctx, 30_000, 'long'), later(ctx, 300, 'short')]);
      const all = await RestatePromise.all([later(ctx, 200, 'a'), later(ctx, 400, 'b')]);
      const any = await RestatePromise.any([later(ctx, 30_000, 'long'), later(ctx, 300, 'short')]);
      const settled = await RestatePromise.allSettled([later(ctx, 100, 'x'), later(ctx, 300, 'y')]);
      const inTime = await later(ctx, 100, 'in time').orTimeout(20_000);
      let timedOut;
      try {
        await later(ctx, 30_000, 'too late').orTimeout(300);
      } catch (e) {
        timedOut = failureOf(e);
      }
      return { race, all, any, settled, inTime, timedOut };
    },
    // Awakeables completed by another handler through delayed sends (§9.3, §9.6).
    awakeables: async (ctx) => {
      const awk = () => ctx.awakeable();
      const [a, b, c, d, e, f] = [awk(), awk(), awk(), awk(), awk(), awk()];
      const awakeables = ctx.serviceSendClient(awakeableService);
      const after = (ms) => rpc.sendOpts({ delay: ms });
      awakeables.resolve({ id: a.id, value: 'a' }, after(100));
      awakeables.resolve({ id: b.id, value: 'b' }, after(300));
      awakeables.reject({ id: c.id, reason: 'c failed' }, after(100));
      awakeables.resolve({ id: d.id, value: 'd' }, after(400));
      awakeables.reject({ id: e.id, reason: 'e failed' }, after(200));
      const all = await RestatePromise.all([a.promise, b.promise, later(ctx, 100, 'slept')]);
      const any = await RestatePromise.any([c.promise, d.promise]);
      const settled = await RestatePromise.allSettled([e.promise, later(ctx, 50, 'slept')]);
      const settledView = settled.map((s) => (s.status === 'fulfilled' ? s.value : `rejected: ${s.reason.message}`));
      const race = await RestatePromise.race([f.promise, later(ctx, 200, 'sleep won')]);
      let timedOut;
      try {
        await f.promise.orTimeout(200);
      } catch (err) {
        timedOut = failureOf(err);
      }
      return { all, any, settled: settledView, race, timedOut };
    },
  },
  options: { inactivityTimeout: 100 },
});

// --- awakeables ---------------------------------------------------------------------------------

const awakeableService = restate.service({
  name: 'Awakeables',
  handlers: {
    // Publishes its awakeable id, waits for it, and reports what it got.
    wait: async (ctx, { tag, binary }) => {
      await ctx.run('before', () => bump(`${tag}:before`));
      const { id, promise } = ctx.awakeable(binary ? serde.binary : undefined);
      await ctx.run('publish', () => publish(tag, 'awakeable', id));
      let outcome;
      try {
        const value = await promise;
        outcome = binary ? { bytes: [...value] } : { resolvedWith: value };
      } catch (e) {
        outcome = { rejected: failureOf(e) };
      }
      await ctx.run('after', () => bump(`${tag}:after`));
      return outcome;
    },
    resolve: async (ctx, { id, value }) => ctx.resolveAwakeable(id, value),
    reject: async (ctx, { id, reason }) => ctx.rejectAwakeable(id, reason),
  },
});

// --- calls and sends ----------------------------------------------------------------------------

const caller = restate.service({
  name: 'Caller',
  handlers: {
    callService: async (ctx, x) => {
      const call = ctx.serviceClient(callee).echo(x);
      return { result: await call, calleeId: await call.invocationId };
    },
    callObject: async (ctx, { key, n }) => {
      const call = ctx.objectClient(counter, key).add(n);
      return { result: await call, calleeId: await call.invocationId };
    },
    callFailing: async (ctx) => {
      try {
        await ctx.serviceClient(callee).fail({ code: 418, message: 'callee says no' });
        return 'unreachable';
      } catch (e) {
        return failureOf(e);
      }
    },
    callBinary: restate.handlers.handler({ input: serde.binary, output: serde.binary }, async (ctx, bytes) =>
      ctx.serviceClient(callee).reverse(bytes, rpc.opts({ input: serde.binary, output: serde.binary })),
    ),
    sendDelayed: async (ctx, { tag, delayMs }) => {
      const sentAt = await ctx.date.now();
      const handle = ctx.serviceSendClient(callee).stamp(tag, rpc.sendOpts({ delay: delayMs }));
      return { sentAt, calleeId: await handle.invocationId };
    },
    sendObject: async (ctx, { key, n }) => ({ calleeId: await ctx.objectSendClient(counter, key).add(n).invocationId }),
    // A call that outlives a server crash (context-crash.test.ts).
    callSlow: async (ctx, { tag, sleepMs }) => {
      await ctx.run('before', () => bump(`${tag}:before`));
      const result = await ctx.serviceClient(callee).slow({ tag, sleepMs });
      await ctx.run('after', () => bump(`${tag}:after`));
      return result;
    },
  },
});

// --- virtual-object state, eager and lazy -------------------------------------------------------

const stateHandlers = {
  add: async (ctx, n) => {
    const next = ((await ctx.get('count')) ?? 0) + n;
    ctx.set('count', next);
    return next;
  },
  set: async (ctx, entries) => {
    for (const [k, v] of Object.entries(entries)) ctx.set(k, v);
  },
  setBytes: restate.handlers.object.exclusive({ input: serde.binary }, async (ctx, bytes) =>
    ctx.set('bytes', bytes, serde.binary),
  ),
  getBytes: restate.handlers.object.shared(
    { output: serde.binary },
    async (ctx) => (await ctx.get('bytes', serde.binary)) ?? new Uint8Array(),
  ),
  clear: async (ctx, key) => ctx.clear(key),
  clearAll: async (ctx) => ctx.clearAll(),
  // Everything the object holds, read key by key (absent keys read as null).
  snapshot: async (ctx) => {
    const keys = (await ctx.stateKeys()).sort();
    const values = {};
    for (const k of keys) values[k] = k === 'bytes' ? [...(await ctx.get(k, serde.binary))] : await ctx.get(k);
    return { keys, values, missing: await ctx.get('never-set') };
  },
  // Reads after writes of the same invocation see the writes (§9.2).
  writeThenRead: async (ctx) => {
    ctx.set('w', 'written');
    ctx.clear('count');
    return { w: await ctx.get('w'), count: await ctx.get('count'), keys: (await ctx.stateKeys()).sort() };
  },
};
const counter = restate.object({ name: 'Counter', handlers: stateHandlers });
const lazyCounter = restate.object({
  name: 'LazyCounter',
  handlers: stateHandlers,
  options: { enableLazyState: true },
});

// --- ctx.rand and ctx.date across a replay ------------------------------------------------------

const replay = restate.service({
  name: 'Replay',
  handlers: {
    // Publishes what each execution saw before the sleep; the suspension makes a second one.
    randomness: async (ctx, tag) => {
      const r1 = ctx.rand.random();
      const u1 = ctx.rand.uuidv4();
      const d1 = await ctx.date.now();
      publish(tag, 'r1', r1);
      publish(tag, 'u1', u1);
      publish(tag, 'd1', d1);
      await ctx.sleep(400);
      const r2 = ctx.rand.random();
      publish(tag, 'r2', r2);
      return { r1, u1, d1, r2 };
    },
  },
  options: { inactivityTimeout: 100 },
});

// --- attach and get-output ----------------------------------------------------------------------

/**
 * GetInvocationOutputCommand (0x0413, §6.2). SDK 1.17 has no public API for it, so this goes
 * through the context's internal command path the way its own `attach` does (16 is the
 * core's command type for it, used in error reports only).
 */
function getOutput(ctx, id) {
  if (typeof ctx.processCompletableEntry !== 'function')
    throw new TerminalError('this SDK build hides processCompletableEntry');
  return ctx.processCompletableEntry(
    16,
    () => {},
    (vm) => vm.sys_get_invocation_output(id),
    async (value, promise) => {
      if (value === 'Empty') promise.resolve({ ready: false });
      else if ('Success' in value)
        promise.resolve({ ready: true, value: JSON.parse(Buffer.from(value.Success).toString('utf8')) });
      else if ('Failure' in value)
        promise.resolve({ ready: true, failure: { code: value.Failure.code, message: value.Failure.message } });
      else return false;
      return true;
    },
  );
}

const attacher = restate.service({
  name: 'Attacher',
  handlers: {
    attach: async (ctx, id) => {
      try {
        return { value: await ctx.invocation(id).attach() };
      } catch (e) {
        return { failure: failureOf(e) };
      }
    },
    output: async (ctx, id) => getOutput(ctx, id),
    // Attaches to its own child at once: the child may not even be created yet.
    sendThenAttach: async (ctx, tag) => {
      const calleeId = await ctx.serviceSendClient(callee).slow({ tag, sleepMs: 200 }).invocationId;
      return { calleeId, value: await ctx.invocation(calleeId).attach() };
    },
  },
});

const endpoint = restate.endpoint();
for (const s of [callee, runs, combinators, awakeableService, caller, counter, lazyCounter, replay, attacher])
  endpoint.bind(s);
serve(endpoint, { counts });
