/**
 * The same durable handler (a run, a sleep that outlasts the inactivity timeout, a run) under
 * each way the server can talk to a deployment: h2c bidi with protocol v6 (the default), h2c
 * with protocol v7 (REDSTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7), and HTTP/1.1 request/response
 * (`use_http_11`), where every unresolved await suspends (service-protocol.md §11, §15).
 */
import test from 'ava';
import { startStack, storeKinds, type StackOptions } from '../support/stack.js';

const modes: Array<[string, StackOptions]> = [
  ['h2c v6', {}],
  ['h2c v7', { env: { REDSTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7: 'true' } }],
  ['HTTP/1.1 request/response', { http1: true }],
];

for (const store of storeKinds) {
  for (const [mode, opts] of modes) {
    test(`${store}, ${mode}: suspension and replay keep each step once`, async (t) => {
      const stack = await startStack(store, opts);
      try {
        const tag = `${store}-${mode}`;
        const [suspended, plain] = await Promise.all([
          stack.ingress.post('restate/call/Suspender/steps', { json: { tag, sleepMs: 600 } }),
          stack.ingress.post('restate/call/Durable/steps', { json: { tag: `${tag}-plain`, sleepMs: 100 } }),
        ]);
        t.is(suspended.statusCode, 200, stack.server.output().slice(-2000));
        t.is(suspended.body, `"${tag}:11:36"`);
        t.is(plain.statusCode, 200);
        t.is(plain.body, `"${tag}-plain:111"`);
        const c = await stack.counts();
        t.is(c[`${tag}:a`], 1);
        t.is(c[`${tag}:b`], 1);
        const flaky = await stack.ingress.post('restate/call/Durable/flaky', {
          json: { tag: `${tag}-flaky`, times: 1 },
        });
        t.is(flaky.body, '"ok after 2"');
      } finally {
        await stack.stop();
      }
    });
  }
}
