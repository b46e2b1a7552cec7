/**
 * Traces: with REDSTATE_TRACING_ENDPOINT pointing at a local OTLP/HTTP receiver, every ingress
 * call is one trace with its `ingress Service/handler` span carrying Restate's attributes, and
 * an `attempt Service/handler` span per attempt as its child, with the journal's commands as
 * events; a client's `traceparent` makes the ingress span its child.
 */
import anyTest, { type TestFn } from 'ava';
import got from 'got';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startService, type StartedService } from '../support/sdk-service.js';
import { startRedstate, type RedstateProcess } from '../support/server.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<{ receiver: OtlpReceiver; server: RedstateProcess; service: StartedService }>;

test.before(async (t) => {
  const receiver = await startOtlpReceiver();
  const service = await startService('basic.mjs');
  const server = await startRedstate({ env: { REDSTATE_TRACING_ENDPOINT: receiver.endpoint } });
  const registered = await got.post(`${server.admin}/deployments`, {
    json: { uri: service.url },
    throwHttpErrors: false,
  });
  if (registered.statusCode !== 201) throw new Error(`registration failed: ${registered.body}`);
  t.context = { receiver, server, service };
});

test.after.always(async (t) => {
  await t.context.server?.stop();
  await t.context.service?.stop();
  await t.context.receiver?.stop();
});

const N = 5;

test('one trace per call, with the ingress span and its attributes', async (t) => {
  const { receiver, server } = t.context;
  const ids: string[] = [];
  for (let i = 0; i < N; i++) {
    const res = await got.post(`${server.ingress}/restate/call/Greeter/greet`, { json: `n${i}` });
    ids.push(String(res.headers['x-restate-id']));
  }
  const ofCalls = (prefix: string) =>
    receiver.spans.filter(
      (s) => s.name.startsWith(prefix) && ids.includes(String(s.attributes['restate.invocation.id'])),
    );
  await waitFor(async () => ofCalls('ingress').length >= N && ofCalls('attempt').length >= N, 10_000);

  const spans = ofCalls('ingress');
  const attempts = ofCalls('attempt');
  t.is(attempts.length, N, 'one attempt per call');
  for (const attempt of attempts) {
    const ingress = spans.find(
      (s) => s.attributes['restate.invocation.id'] === attempt.attributes['restate.invocation.id'],
    )!;
    t.is(attempt.name, 'attempt Greeter/greet');
    t.is(attempt.traceId, ingress.traceId, 'the attempt is in the trace of its call');
    t.is(attempt.parentSpanId, ingress.spanId, 'a child of the ingress span');
    t.like(attempt.attributes, { 'rpc.service': 'Greeter', 'rpc.method': 'greet', 'restate.invocation.attempt': 1 });
    t.true(
      (attempt.events ?? []).some((e) => e.name === 'restate.invocation.lifecycle.new_command'),
      'commands are span events',
    );
  }
  t.is(spans.length, N);
  t.is(new Set(spans.map((s) => s.traceId)).size, N, 'one trace per call');
  for (const span of spans) {
    t.is(span.name, 'ingress Greeter/greet');
    t.is(span.parentSpanId ?? '', '', 'a root span without a client traceparent');
    t.like(span.attributes, {
      'rpc.service': 'Greeter',
      'rpc.method': 'greet',
      'restate.invocation.target': 'Greeter/greet',
      'http.request.method': 'POST',
      'url.path': '/restate/call/Greeter/greet',
      'http.response.status_code': 200,
    });
    t.regex(span.traceId, /^[0-9a-f]{32}$/);
    t.is(span.resource['service.name'], 'redstate');
  }
  t.true(receiver.contentTypes.every((c) => c.startsWith('application/json')));
});

test("a client's traceparent is the ingress span's parent", async (t) => {
  const { receiver, server } = t.context;
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const parent = '00f067aa0ba902b7';
  const res = await got.post(`${server.ingress}/restate/call/Greeter/greet`, {
    json: 'Bo',
    headers: { traceparent: `00-${traceId}-${parent}-01` },
  });
  const id = String(res.headers['x-restate-id']);
  let span: ReceivedSpan | undefined;
  await waitFor(
    async () =>
      (span = receiver.spans.find(
        (s) => s.name.startsWith('ingress') && s.attributes['restate.invocation.id'] === id,
      )) !== undefined,
    10_000,
  );
  t.is(span!.traceId, traceId);
  t.is(span!.parentSpanId, parent);
});

test('a failed request is a span with an error status', async (t) => {
  const { receiver, server } = t.context;
  const res = await got.post(`${server.ingress}/restate/call/Greeter/nope`, { json: 1, throwHttpErrors: false });
  t.is(res.statusCode, 404);
  let span: ReceivedSpan | undefined;
  await waitFor(
    async () => (span = receiver.spans.find((s) => s.attributes['http.response.status_code'] === 404)) !== undefined,
    10_000,
  );
  t.is(span!.name, 'ingress-http-request');
  t.is(span!.status?.code, 2);
});
