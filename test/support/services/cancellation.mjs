// SDK services for test/e2e/cancellation.test.ts (issue 29): cancellation from handlers
// (ctx.cancel by id) of calls and sends that block forever, and attaches to what was
// cancelled, as a user's programs do them. Each Blocker bumps `<tag>:started` once it runs;
// ids go out as counters `<tag>:<name>=<id>`.
//
// Served by serve.mjs (READY/COUNTS ports on stdout).
import * as restate from '@restatedev/restate-sdk';
import { counters, serve } from './serve.mjs';

const { InvocationIdParser, rpc } = restate;
const { counts, bump } = counters();

const failureOf = (e) => ({ code: e.code, message: e.message });
const target = (ctx, id) => ctx.invocation(InvocationIdParser.fromString(id));

/** What waiting for `promise` ended with: its value or its rejection. */
async function outcome(promise) {
  try {
    return { value: await promise };
  } catch (e) {
    return { rejected: failureOf(e) };
  }
}

const blocker = restate.service({
  name: 'Blocker',
  handlers: {
    /** Blocks on an awakeable nobody resolves. */
    block: async (ctx, tag) => {
      await ctx.run('started', () => bump(`${tag}:started`));
      return ctx.awakeable().promise;
    },
  },
});

const canceller = restate.service({
  name: 'Canceller',
  handlers: {
    /** Starts `n` calls that block forever, cancels each by its id, and reports how each call ended. */
    callsThenCancel: async (ctx, { tag, n }) => {
      const calls = Array.from({ length: n }, (_, i) => ctx.serviceClient(blocker).block(`${tag}-${i}`));
      const ids = [];
      for (const call of calls) ids.push(await call.invocationId);
      for (const id of ids) target(ctx, id).cancel();
      const outcomes = [];
      for (const call of calls) outcomes.push(await outcome(call));
      return { ids, outcomes };
    },
    /** Cancels an invocation this handler did not start. */
    cancel: async (ctx, id) => target(ctx, id).cancel(),
    /** Sends a Blocker, cancels it, then attaches to it. */
    sendCancelAttach: async (ctx, tag) => {
      const id = await ctx.serviceSendClient(blocker).block(tag).invocationId;
      target(ctx, id).cancel();
      return { id, ...(await outcome(target(ctx, id).attach())) };
    },
    /** Sends a Blocker that starts later, publishes its id, and attaches to it. */
    attachToLater: async (ctx, { tag, delayMs }) => {
      const id = await ctx.serviceSendClient(blocker).block(tag, rpc.sendOpts({ delay: delayMs })).invocationId;
      await ctx.run('publish', () => bump(`${tag}:child=${id}`));
      return outcome(target(ctx, id).attach());
    },
  },
});

const endpoint = restate.endpoint();
for (const s of [blocker, canceller]) endpoint.bind(s);
serve(endpoint, { counts });
