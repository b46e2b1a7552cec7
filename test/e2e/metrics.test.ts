/**
 * Prometheus metrics, scraped from the server process as Prometheus would (node port and admin
 * port), parsed with a text-format parser: N calls move Restate's ingress counters by N and the
 * store's commit histogram by N or more, on both stores.
 */
import anyTest, { type TestFn } from 'ava';
import { scrape } from '../support/prometheus.js';
import { backendOf, stacksPerStore, storeKinds, type Stack } from '../support/stack.js';

const test = anyTest as TestFn<Record<string, Stack>>;

stacksPerStore(test);

const N = 25;
const json = { 'content-type': 'application/json' };
const rpc = { rpc_service: 'Durable', rpc_type: 'call' };

for (const store of storeKinds) {
  test(`${store}: N calls move the ingress counters by N and the commit histogram by N or more`, async (t) => {
    const { server, ingress } = t.context[store]!;
    const { scrape: before } = await scrape(`${server.node}/metrics`);
    for (let i = 0; i < N; i++) {
      const res = await ingress.post('restate/call/Durable/greet', { headers: json, body: `"n${i}"` });
      t.is(res.statusCode, 200);
    }
    // A handler that does not exist is a request error of its (registered) service; a service
    // that does not exist is only admitted: made-up names never become label values.
    t.is((await ingress.post('restate/call/Durable/nope', { headers: json, body: '1' })).statusCode, 404);
    t.is((await ingress.post('restate/call/Nope/greet', { headers: json, body: '1' })).statusCode, 404);

    const { contentType, scrape: after } = await scrape(`${server.node}/metrics`);
    t.regex(contentType ?? '', /^text\/plain; version=0\.0\.4/);
    const moved = (name: string, labels: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);
    t.is(moved('restate_ingress_requests_total', { status: 'admitted' }), N + 2);
    t.is(moved('restate_ingress_requests_total', { status: 'completed', ...rpc }), N);
    t.is(moved('restate_ingress_requests_total', { status: 'request_error', ...rpc }), 1);
    t.false(after.labelSets('restate_ingress_requests_total').some((labels) => labels['rpc_service'] === 'Nope'));

    const duration = 'restate_ingress_request_duration_seconds';
    t.is(after.type(duration), 'SUMMARY');
    t.is(after.count(duration, rpc) - before.count(duration, rpc), N + 1);
    t.deepEqual(
      after
        .labelSets(duration)
        .filter((labels) => labels['rpc_service'] === rpc.rpc_service)
        .map((labels) => labels['quantile']),
      ['0.5', '0.9', '0.99', '1'],
    );

    const commits =
      after.count('redstate_store_commit_duration_seconds', { backend: backendOf(store) }) -
      before.count('redstate_store_commit_duration_seconds', { backend: backendOf(store) });
    t.true(commits >= N, `${commits} commits for ${N} calls`);
    t.is(after.type('redstate_store_commit_duration_seconds'), 'HISTOGRAM');
    t.true(
      after.count('redstate_store_group_commit_size', { backend: backendOf(store) }) >
        before.count('redstate_store_group_commit_size', { backend: backendOf(store) }),
    );
    t.is(after.value('redstate_store_connected', { backend: backendOf(store) }), 1);

    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      t.true(after.names().includes(name), name);
    }
    for (const name of [
      'restate_invoker_invocation_tasks_total',
      'restate_invoker_enqueue_total',
      'redstate_actors_in_memory',
      'redstate_timers_armed',
      'redstate_attempts_waiting_to_start',
      'redstate_outbox_messages',
      'redstate_invocations',
    ]) {
      t.true(after.names().includes(name), `${name} is defined for the runtime`);
    }
  });

  // Serial: the counters of the other tests' calls would move the gauge meanwhile.
  test.serial(
    `${store}: the invocations gauge counts calls that waited for their key's lock out of pending`,
    async (t) => {
      const { server, ingress } = t.context[store]!;
      const status = async () => {
        const { scrape: s } = await scrape(`${server.node}/metrics`);
        return (name: string) => s.value('redstate_invocations', { status: name });
      };
      const before = await status();
      // One key: all but one wait in pending, and each is granted the lock by the commit that
      // released it (a step the next commit of the waiter stores).
      const results = await Promise.all(
        Array.from({ length: 12 }, () => ingress.post('restate/call/Tally/gauge/add', { headers: json, body: '1' })),
      );
      t.true(results.every((r) => r.statusCode === 200));
      const after = await status();
      t.is(after('pending') - before('pending'), 0);
      t.is(after('running') - before('running'), 0);
      t.is(after('completed') - before('completed'), 12);
    },
  );

  test(`${store}: the admin port serves the same metrics`, async (t) => {
    const { server } = t.context[store]!;
    const [{ scrape: node }, { scrape: admin, contentType }] = await Promise.all([
      scrape(`${server.node}/metrics`),
      scrape(`${server.admin}/metrics`),
    ]);
    t.regex(contentType ?? '', /^text\/plain; version=0\.0\.4/);
    t.deepEqual(admin.names(), node.names());
    t.true(node.names().includes('restate_ingress_requests_total'));
    const other = await fetch(`${server.node}/nope`);
    t.is(other.status, 404);
  });
}
