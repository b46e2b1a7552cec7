/**
 * `@restatedev/restate-sdk-clients` against redstate: the typed ingress client uses the legacy
 * call/send paths, `/restate/invocation/{id}/attach`, `/restate/workflow/{wf}/{key}/attach|output`
 * and `/restate/a/{id}/resolve|reject`, and reads the 202 body and the 470 status.
 */
import anyTest, { type TestFn } from 'ava';
import * as clients from '@restatedev/restate-sdk-clients';
import { stacksPerStore, storeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;

stacksPerStore(test, { serviceFile: 'objects.mjs' });

// The services of test/support/services/objects.mjs, as the client's typing wants them.
type OnceApi = { run: (ctx: unknown, input: { tag: string; sleepMs?: number }) => Promise<string> };
type CounterApi = {
  add: (ctx: unknown, input: { delta?: number }) => Promise<number>;
  get: (ctx: unknown) => Promise<number>;
};
type QuickWfApi = {
  run: (ctx: unknown, input: { sleepMs?: number }) => Promise<string>;
  info: (ctx: unknown) => Promise<string>;
};
type SignalsApi = { wait: (ctx: unknown, input: { tag: string }) => Promise<{ resolvedWith: unknown }> };

const connect = (stack: Stack) => clients.connect({ url: stack.server.ingress });

/** The awakeable id Signals/wait published for `tag`. */
async function awakeableOf(stack: Stack, tag: string): Promise<string> {
  let id: string | undefined;
  await waitFor(async () => {
    const key = Object.keys(await stack.counts()).find((k) => k.startsWith(`awk:${tag}=`));
    id = key?.slice(`awk:${tag}=`.length);
    return id !== undefined;
  }, 20_000);
  return id!;
}

for (const store of storeKinds) {
  test(`${store}: calls through the typed service and object clients`, async (t) => {
    const stack = t.context[store]!;
    const client = connect(stack);
    const tag = `${store}-client-call`;
    t.is(await client.serviceClient<OnceApi>({ name: 'Once' }).run({ tag }), `${tag}:1`);
    const counter = client.objectClient<CounterApi>({ name: 'Counter' }, `${store} client/key`);
    t.is(await counter.add({ delta: 2 }), 2);
    t.is(await counter.add({ delta: 3 }), 5);
    t.is(await counter.get(), 5);
    // The generic form, and an ingress error as the client reports it.
    t.is(
      await client.call({
        service: 'Once',
        handler: 'run',
        parameter: { tag: `${tag}-generic` },
        opts: clients.Opts.from({ input: clients.serde.json, output: clients.serde.json }),
      }),
      `${tag}-generic:1`,
    );
    const err = await t.throwsAsync(
      client.call({
        service: 'Once',
        handler: 'nope',
        parameter: {},
        opts: clients.Opts.from({ input: clients.serde.json }),
      }),
    );
    t.true(err instanceof clients.HttpCallError);
    t.is((err as clients.HttpCallError).status, 404);
    t.is(
      (err as clients.HttpCallError).responseText,
      '{"code":404,"message":"the service \'Once\' exists, but the handler \'nope\' was not found, check that the handler exists in the latest registered service version.","source":"ingress"}',
    );
  });

  test(`${store}: a send, then its result`, async (t) => {
    const stack = t.context[store]!;
    const client = connect(stack);
    const tag = `${store}-client-send`;
    const handle = await client.serviceSendClient<OnceApi>({ name: 'Once' }).run({ tag, sleepMs: 300 });
    t.is(handle.status, 'Accepted');
    t.regex(handle.invocationId, /^inv_1[0-9a-zA-Z]{33}$/);
    // Without an idempotency key the client itself refuses (it cannot know about auto keys) ...
    t.false(handle.attachable);
    await t.throwsAsync(client.result(handle));
    // ... but the server keeps the result attachable, as Restate does.
    t.is(await client.result({ ...handle, attachable: true }), `${tag}:1`);
    // A delayed send (`/send?delay=300ms`).
    const delayed = await client
      .serviceSendClient<OnceApi>({ name: 'Once' })
      .run({ tag: `${tag}-delayed` }, clients.rpc.sendOpts({ delay: 300, idempotencyKey: `${tag}-delayed` }));
    t.is(await client.result(delayed), `${tag}-delayed:1`);
  });

  test(`${store}: idempotent sends and calls, then attach`, async (t) => {
    const stack = t.context[store]!;
    const client = connect(stack);
    const tag = `${store}-client-idem`;
    const send = client.serviceSendClient<OnceApi>({ name: 'Once' });
    const first = await send.run({ tag, sleepMs: 300 }, clients.rpc.sendOpts({ idempotencyKey: tag }));
    t.true(first.attachable);
    t.is(first.status, 'Accepted');
    const again = await send.run({ tag: 'ignored' }, clients.rpc.sendOpts({ idempotencyKey: tag }));
    t.is(again.status, 'PreviouslyAccepted');
    t.is(again.invocationId, first.invocationId);
    t.is(await client.result(first), `${tag}:1`);
    t.is(await client.result(again), `${tag}:1`);
    // A call with the same key answers from the stored result.
    t.is(
      await client
        .serviceClient<OnceApi>({ name: 'Once' })
        .run({ tag: 'ignored' }, clients.rpc.opts({ idempotencyKey: tag })),
      `${tag}:1`,
    );
    t.is((await stack.counts())[`once:${tag}`], 1);
  });

  test(`${store}: workflow submit, output, attach`, async (t) => {
    const stack = t.context[store]!;
    const client = connect(stack);
    const id = `${store}-client-wf`;
    const wf = client.workflowClient<QuickWfApi>({ name: 'QuickWf' }, id);
    const submission = await wf.workflowSubmit({ sleepMs: 1000 });
    t.is(submission.status, 'Accepted');
    t.false((await wf.workflowOutput()).ready);
    t.is(await wf.workflowAttach(), `wf ${id} 1`);
    const output = await wf.workflowOutput();
    t.true(output.ready);
    t.is(output.result, `wf ${id} 1`);
    t.is(await client.result(submission), `wf ${id} 1`);
    t.is(await wf.info(), `info ${id}`);
    const resubmitted = await wf.workflowSubmit({});
    t.is(resubmitted.status, 'PreviouslyAccepted');
    t.is(resubmitted.invocationId, submission.invocationId);
    // A workflow id that never ran: attach fails with the server's 404.
    const never = client.workflowClient<QuickWfApi>({ name: 'QuickWf' }, `${id}-never`);
    const err = await t.throwsAsync(never.workflowAttach());
    t.is((err as clients.HttpCallError).status, 404);
    const out = await t.throwsAsync(never.workflowOutput());
    t.is(
      (out as clients.HttpCallError).responseText,
      '{"code":404,"message":"invocation not found","source":"ingress"}',
    );
  });

  test(`${store}: awakeables resolved and rejected through the client`, async (t) => {
    const stack = t.context[store]!;
    const client = connect(stack);
    const signals = client.serviceSendClient<SignalsApi>({ name: 'Signals' });
    const tag = `${store}-client-awk`;
    const waiting = await signals.wait({ tag }, clients.rpc.sendOpts({ idempotencyKey: tag }));
    await client.resolveAwakeable(await awakeableOf(stack, tag), { hello: ['world'] });
    t.deepEqual(await client.result(waiting), { resolvedWith: { hello: ['world'] } });

    const rejected = await signals.wait({ tag: `${tag}-r` }, clients.rpc.sendOpts({ idempotencyKey: `${tag}-r` }));
    await client.rejectAwakeable(await awakeableOf(stack, `${tag}-r`), 'nope reason');
    const err = await t.throwsAsync(client.result(rejected));
    t.is((err as clients.HttpCallError).status, 500);
    t.is((err as clients.HttpCallError).responseText, '{"code":500,"message":"nope reason","source":"invocation"}');
  });
}
