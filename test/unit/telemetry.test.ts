/**
 * The telemetry API the runtime will call (src/telemetry/): runtime metrics helpers, attempt
 * spans as children of an ingress span with journal events and a `traceparent` to hand on,
 * and log lines with Restate's field names.
 */
import test from 'ava';
import { capturingLogger } from '../support/log-lines.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { Scrape } from '../support/prometheus.js';
import { invocationFields } from '../../src/telemetry/log.js';
import {
  invocationStatusChanged,
  metricsText,
  recordActorsInMemory,
  recordEnqueue,
  recordInvocationTask,
} from '../../src/telemetry/metrics.js';
import {
  JournalEvent,
  startAttemptSpan,
  startIngressSpan,
  startTracing,
  stopTracing,
  tracesUrl,
} from '../../src/telemetry/tracing.js';
import { waitFor } from '../support/wait.js';

test('runtime metrics helpers record under Restate names and bounded labels', async (t) => {
  recordInvocationTask('started', 3);
  recordInvocationTask('completed', 3);
  recordEnqueue(3);
  recordActorsInMemory('invocation', 1);
  invocationStatusChanged(undefined, 'running');
  invocationStatusChanged('running', 'completed');
  const scrape = new Scrape((await metricsText()).body);
  t.is(scrape.value('restate_invoker_invocation_tasks_total', { status: 'started', partition_id: '3' }), 1);
  t.is(scrape.value('restate_invoker_invocation_tasks_total', { status: 'completed', partition_id: '3' }), 1);
  t.is(scrape.value('restate_invoker_enqueue_total', { partition_id: '3' }), 1);
  t.is(scrape.value('redstate_actors_in_memory', { kind: 'invocation' }), 1);
  t.is(scrape.value('redstate_invocations', { status: 'running' }), 0);
  t.is(scrape.value('redstate_invocations', { status: 'completed' }), 1);
});

test('tracing off: no spans', (t) => {
  t.is(startIngressSpan({ method: 'POST', path: '/x' }), undefined);
  t.is(startAttemptSpan({ invocationId: 'inv_1', target: { service: 'S', handler: 'h' }, attempt: 1 }), undefined);
});

test('tracesUrl puts /v1/traces under the endpoint unless it names it', (t) => {
  t.is(tracesUrl('http://collector:4318'), 'http://collector:4318/v1/traces');
  t.is(tracesUrl('http://collector:4318/otel/'), 'http://collector:4318/otel/v1/traces');
  t.is(tracesUrl('http://collector:4318/v1/traces'), 'http://collector:4318/v1/traces');
});

test.serial(
  'an attempt span is a child of the ingress span, carries journal events and hands on a traceparent',
  async (t) => {
    const receiver = await startOtlpReceiver();
    t.teardown(() => receiver.stop());
    await startTracing(receiver.endpoint);
    const target = { service: 'Counter', key: 'k1', handler: 'add' };
    const ingress = startIngressSpan({ method: 'POST', path: '/restate/call/Counter/k1/add' })!;
    ingress.setTarget(target);
    ingress.setInvocationId('inv_1abc');
    const attempt = startAttemptSpan({
      invocationId: 'inv_1abc',
      target,
      attempt: 2,
      deploymentId: 'dp_1',
      parent: ingress.traceparent(),
    })!;
    attempt.event(JournalEvent.newCommand, {
      [JournalEvent.commandType]: 'SetState',
      [JournalEvent.commandName]: 'count',
    });
    const traceparent = attempt.traceparent();
    t.regex(traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    attempt.end();
    ingress.end();
    await stopTracing();
    await waitFor(async () => receiver.spans.length >= 2, 5_000);

    const ingressSpan = receiver.spans.find((s) => s.name === 'ingress Counter/add')!;
    const attemptSpan = receiver.spans.find((s) => s.name === 'attempt Counter/add')!;
    t.is(attemptSpan.traceId, ingressSpan.traceId);
    t.is(attemptSpan.parentSpanId, ingressSpan.spanId);
    t.is(traceparent, `00-${attemptSpan.traceId}-${attemptSpan.spanId}-01`);
    t.like(attemptSpan.attributes, {
      'restate.invocation.id': 'inv_1abc',
      'restate.invocation.target': 'Counter/k1/add',
      'restate.invocation.attempt': 2,
      'restate.deployment.id': 'dp_1',
      'rpc.service': 'Counter',
      'rpc.method': 'add',
    });
    t.deepEqual(
      (attemptSpan.events ?? []).map((e) => e.name),
      [JournalEvent.newCommand],
    );
    t.is(startIngressSpan({ method: 'GET', path: '/' }), undefined, 'stopped');
  },
);

test('child loggers carry Restate field names', async (t) => {
  const { log, lines } = await capturingLogger();
  log.child(invocationFields('inv_1abc', { service: 'Greeter', handler: 'greet' })).warn('attempt failed');
  t.like(lines[0], {
    level: 'warn',
    msg: 'attempt failed',
    'restate.invocation.id': 'inv_1abc',
    'restate.invocation.target': 'Greeter/greet',
    'rpc.service': 'Greeter',
    'rpc.method': 'greet',
  });
});
