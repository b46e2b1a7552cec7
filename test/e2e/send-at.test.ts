/**
 * `?at=` on sends (issue 26, restatedev/restate#3916): a send that starts at an RFC 3339 time,
 * on every send path (plain, keyed, scoped, legacy), beside `?delay=` but never with it; a time
 * past starts now; bad values answer 400 in the ingress's error shape; the due time survives a
 * SIGKILL of the server (and of redis-server). Real server, the SDK services of flow.mjs, both
 * stores.
 */
import anyTest, { type TestFn } from 'ava';
import { sqlRows, stacksPerStore, storeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;

stacksPerStore(test, { serviceFile: 'flow.mjs', env: { REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES: 'true' } });

const iso = (ms: number) => new Date(ms).toISOString();

interface Sent {
  invocationId: string;
  executionTime?: string;
  status: string;
}

async function send(stack: Stack, path: string, body: unknown): Promise<{ status: number; sent: Sent; raw: string }> {
  const res = await stack.ingress.post(path, { json: body });
  return { status: res.statusCode, sent: (res.statusCode === 202 ? JSON.parse(res.body) : {}) as Sent, raw: res.body };
}

async function statusOf(stack: Stack, id: string): Promise<Record<string, unknown>> {
  const [row] = await sqlRows(stack.admin, `select status, scheduled_start_at from sys_invocation where id = '${id}'`);
  return row ?? {};
}

async function completed(stack: Stack, id: string, ms: number): Promise<void> {
  await waitFor(async () => (await statusOf(stack, id))['status'] === 'completed', ms, 100);
}

for (const store of storeKinds) {
  test(`${store}: ?at= in the future on plain, keyed, scoped and legacy sends: scheduled until then`, async (t) => {
    const stack = t.context[store]!;
    const at = Date.now() + 2500;
    const paths = [
      'restate/send/Flow/work',
      'restate/send/FlowObj/k1/add',
      `restate/scope/${store}-at/send/Flow/work`,
      'FlowObj/k2/add/send',
    ];
    const sends = await Promise.all(
      paths.map((p) =>
        send(
          stack,
          `${p}?at=${encodeURIComponent(iso(at))}`,
          p.includes('FlowObj') ? 1 : { tag: `${store}-at-${p}`, ms: 0 },
        ),
      ),
    );
    for (const [i, { status, sent, raw }] of sends.entries()) {
      t.is(status, 202, `${paths[i]}: ${raw}`);
      t.is(sent.status, 'Accepted');
      t.is(sent.executionTime, iso(at).replace(/\.(\d{3})Z$/, '.$1000000Z'), paths[i]);
      const row = await statusOf(stack, sent.invocationId);
      t.is(row['status'], 'scheduled', paths[i]);
      t.is(row['scheduled_start_at'], iso(at).replace('.000Z', 'Z'), paths[i]);
    }
    for (const { sent } of sends) await completed(stack, sent.invocationId, 15_000);
    t.true(Date.now() >= at);
    const [first] = await sqlRows(
      stack.admin,
      `select running_at from sys_invocation where id = '${sends[0]!.sent.invocationId}'`,
    );
    t.true(
      Date.parse(String(first!['running_at'])) >= at,
      `started at ${String(first!['running_at'])}, due ${iso(at)}`,
    );
  });

  test(`${store}: ?at= with an offset, and a time past, which starts now`, async (t) => {
    const stack = t.context[store]!;
    // 2 s ahead, written in +05:30; an unencoded `+` arrives as a space and still reads as `+`.
    const at = Math.ceil((Date.now() + 2000) / 1000) * 1000;
    const local = new Date(at + 5.5 * 3_600_000).toISOString().replace('.000Z', '+05:30');
    const offset = await send(stack, `restate/send/FlowObj/off/add?at=${local.replace('+', '%2B')}`, 1);
    t.is(offset.status, 202, offset.raw);
    t.is(offset.sent.executionTime, new Date(at).toISOString().replace('.000Z', '.000000000Z'));
    const spaced = await send(stack, `restate/send/FlowObj/off/add?at=${local}`, 1);
    t.is(spaced.sent.executionTime, offset.sent.executionTime, spaced.raw);

    const before = Date.now();
    const past = await send(stack, 'restate/send/Flow/work?at=2020-01-01T00:00:00Z', { tag: `${store}-past`, ms: 0 });
    t.is(past.status, 202, past.raw);
    const started = Date.parse(past.sent.executionTime!);
    t.true(started >= before - 5 && started <= Date.now() + 5, `executionTime ${past.sent.executionTime} is now`);
    await completed(stack, past.sent.invocationId, 10_000);
  });

  test(`${store}: bad ?at= values, ?at= with ?delay=, ?at= on a call: 400 and nothing stored`, async (t) => {
    const stack = t.context[store]!;
    for (const bad of [
      'tomorrow',
      '2026-02-30T00:00:00Z',
      '2026-12-01T25:00:00Z',
      '2026-12-01T10:00:00',
      '2026-12-01',
      '1767225600000',
    ]) {
      const res = await stack.ingress.post(`restate/send/FlowObj/never/add?at=${encodeURIComponent(bad)}`, { json: 1 });
      t.is(res.statusCode, 400, bad);
      t.is(
        res.body,
        JSON.stringify({
          code: 400,
          message: `bad at query parameter, must be a RFC 3339 timestamp such as 2026-12-01T09:30:00Z or 2026-12-01T10:30:00+01:00: '${bad}'`,
          source: 'ingress',
        }),
      );
    }
    const both = await stack.ingress.post('restate/send/FlowObj/never/add?delay=1s&at=2030-01-01T00:00:00Z', {
      json: 1,
    });
    t.is(both.statusCode, 400);
    t.is(
      both.body,
      '{"code":400,"message":"cannot use both the delay and the at query parameters, use one of them","source":"ingress"}',
    );
    const call = await stack.ingress.post('restate/call/FlowObj/never/add?at=2030-01-01T00:00:00Z', { json: 1 });
    t.is(call.statusCode, 400);
    t.is(
      call.body,
      '{"code":400,"message":"cannot use the at query parameter with calls. The at is supported only with sends","source":"ingress"}',
    );
    t.deepEqual(await sqlRows(stack.admin, "select id from sys_invocation where target_service_key = 'never'"), []);
  });

  test.serial(
    `${store}: a send ?at= survives a SIGKILL of the server${store === 'redis' ? ' and of redis-server' : ''}, and runs once at its time`,
    async (t) => {
      const stack = t.context[store]!;
      const at = Date.now() + 4000;
      const { sent } = await send(stack, `restate/send/FlowObj/crash/add?at=${iso(at)}`, 5);
      await stack.redis?.halt({ kill: true });
      await stack.server.kill();
      await stack.redis?.resume();
      await stack.server.restart();
      t.is((await statusOf(stack, sent.invocationId))['status'], 'scheduled');
      await completed(stack, sent.invocationId, 20_000);
      t.true(Date.now() >= at);
      const out = await stack.ingress.get(`restate/output/${sent.invocationId}`);
      t.is(out.body, '5', 'added once');
    },
  );
}
