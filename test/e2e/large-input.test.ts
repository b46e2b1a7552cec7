/**
 * Large inputs through the h2c sessions towards a deployment (issue 15, point 3): a 10 MiB
 * input once broke the embedded-store server's session with NGHTTP2_ENHANCE_YOUR_CALM, and every
 * later invocation on that deployment failed the same way. Restate 1.7.12 answers 200 for a
 * 10 MiB echo (its request size limit is 32 MiB). Both stores, real SDK service (programs.mjs).
 */
import anyTest, { type TestFn } from 'ava';
import { randomBytes } from 'node:crypto';
import { stacksPerStore, storeKinds, type Stack } from '../support/stack.js';

const test = anyTest as TestFn<Record<string, Stack>>;
stacksPerStore(test, { serviceFile: 'programs.mjs' });

const MiB = 1024 * 1024;

for (const store of storeKinds) {
  test(`${store}: a 10 MiB input, and small calls beside it, all answer`, async (t) => {
    const stack = t.context[store]!;
    const big = randomBytes(10 * MiB);
    const headers = { 'content-type': 'application/octet-stream' };
    const [length, ...small] = await Promise.all([
      stack.ingress.post('restate/call/Echo/length', { body: big, headers }),
      ...[1, 2, 3].map((n) => stack.ingress.post('restate/call/Child/hello', { json: `small ${n}` })),
    ]);
    t.is(length.statusCode, 200, length.body);
    t.is(length.body, String(10 * MiB));
    for (const [i, res] of small.entries()) t.is(res.body, `"hello from small ${i + 1}"`);
  });

  test(`${store}: 30 MiB both ways (just under the 32 MiB limit), then the deployment still serves`, async (t) => {
    const stack = t.context[store]!;
    const big = randomBytes(30 * MiB);
    const echoed = await stack.ingress.post('restate/call/Echo/bytes', {
      body: big,
      headers: { 'content-type': 'application/octet-stream' },
      responseType: 'buffer',
    });
    t.is(echoed.statusCode, 200);
    t.true(Buffer.compare(echoed.body, big) === 0, `echoed ${echoed.body.length} bytes`);
    const after = await stack.ingress.post('restate/call/Child/hello', { json: 'after' });
    t.is(after.body, '"hello from after"');
  });

  test(`${store}: an input over the request size limit is refused alone`, async (t) => {
    const stack = t.context[store]!;
    const tooBig = await stack.ingress.post('restate/call/Echo/length', {
      body: Buffer.alloc(33 * MiB),
      headers: { 'content-type': 'application/octet-stream' },
    });
    t.is(tooBig.statusCode, 413);
    const after = await stack.ingress.post('restate/call/Child/hello', { json: 'after' });
    t.is(after.body, '"hello from after"');
  });
}
