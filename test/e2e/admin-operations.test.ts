/**
 * The rest of the admin API against the server process, on both stores
 * (reference-behavior.md §3.1, §3.4, §3.5): restart-as-new (with and without a journal
 * prefix), purge-journal, POST /services/{name}/state (queued behind a running exclusive
 * invocation, version checks, across a SIGKILL), service settings taking effect on new
 * invocations, and GET /openapi; resume retrying a backing-off invocation at once, redstate's
 * retry-policy settings, and every attempt's failure kept in the history across a SIGKILL.
 */
import anyTest, { type TestFn } from 'ava';
import { startService, type StartedService } from '../support/sdk-service.js';
import { sqlRows, startStack, nodeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

interface World {
  stack: Stack;
  objects: StartedService;
}

const test = anyTest as TestFn<Record<string, World>>;

test.before(async (t) => {
  const worlds = await Promise.all(
    nodeKinds.map(async (kind) => {
      // Durable (durable.mjs) comes with the stack; Counter and QuickWf (objects.mjs) are a second deployment.
      const stack = await startStack(kind);
      const objects = await startService('objects.mjs');
      const res = await stack.admin.post('deployments', { json: { uri: objects.url } });
      if (res.statusCode !== 201) throw new Error(`registration failed: ${res.statusCode} ${res.body}`);
      return [kind, { stack, objects }] as const;
    }),
  );
  t.context = Object.fromEntries(worlds);
});

test.after.always(async (t) => {
  await Promise.all(Object.values(t.context).map(async (w) => Promise.all([w.stack.stop(), w.objects.stop()])));
});

const query = (stack: Stack, sql: string) => sqlRows(stack.admin, sql);

async function call(stack: Stack, path: string, body: unknown): Promise<{ id: string; status: number; body: string }> {
  const res = await stack.ingress.post(`restate/call/${path}`, { json: body });
  return { id: String(res.headers['x-restate-id']), status: res.statusCode, body: res.body };
}

async function send(stack: Stack, path: string, body: unknown): Promise<string> {
  const res = await stack.ingress.post(`restate/send/${path}`, { json: body });
  return (JSON.parse(res.body) as { invocationId: string }).invocationId;
}

async function restart(
  stack: Stack,
  id: string,
  query = '',
): Promise<{ status: number; body: string; newId?: string }> {
  const res = await stack.admin.patch(`v4/invocations/${id}/restart-as-new${query}`);
  const newId =
    res.statusCode === 200 ? (JSON.parse(res.body) as { new_invocation_id: string }).new_invocation_id : undefined;
  return { status: res.statusCode, body: res.body, ...(newId ? { newId } : {}) };
}

const json = (value: unknown) => [...Buffer.from(JSON.stringify(value))];

for (const store of nodeKinds) {
  test(`${store}: restart-as-new runs the same input again, from the start or from a journal prefix`, async (t) => {
    const { stack } = t.context[store]!;
    const first = await call(stack, 'Durable/steps', { tag: `rs-${store}` });
    t.is(first.body, `"rs-${store}:111"`);

    const fresh = await restart(stack, first.id);
    t.is(fresh.status, 200);
    t.regex(fresh.body, /^\{"new_invocation_id":"inv_[0-9A-Za-z]{34}"\}$/);
    t.is(fresh.newId!.slice(0, 16), first.id.slice(0, 16), 'same partition key');
    t.is((await stack.ingress.get(`restate/attach/${fresh.newId}`)).body, `"rs-${store}:222"`);
    const [row] = await query(
      stack,
      `SELECT invoked_by, restarted_from, idempotency_key, target FROM sys_invocation WHERE id = '${fresh.newId}'`,
    );
    t.deepEqual(row, { invoked_by: 'restart_as_new', restarted_from: first.id, target: 'Durable/steps' });

    // Entries 0..2 are Input, Run a and its completion: step a is replayed, b and c run again.
    const fromTwo = await restart(stack, first.id, '?from=2&deployment=keep');
    t.is(fromTwo.status, 200);
    t.is((await stack.ingress.get(`restate/attach/${fromTwo.newId}`)).body, `"rs-${store}:133"`);
    const pinned = await query(
      stack,
      `SELECT id, pinned_deployment_id FROM sys_invocation WHERE id IN ('${first.id}', '${fromTwo.newId}')`,
    );
    t.is(pinned[0]!['pinned_deployment_id'], pinned[1]!['pinned_deployment_id']);
    // Entry 1 is the Run command alone: its completion (entry 2) comes with it.
    const fromOne = await restart(stack, first.id, '?from=1');
    t.is((await stack.ingress.get(`restate/attach/${fromOne.newId}`)).body, `"rs-${store}:144"`);

    const incomplete = `{"message":"The prefix of the journal '${first.id}' up to 'from' (included) contains some Commands without respective Completions.","restate_code":null}`;
    for (const from of [9, 99]) {
      const res = await restart(stack, first.id, `?from=${from}`);
      t.is(res.status, 400);
      t.is(res.body, incomplete);
    }
    const badFrom = await restart(stack, first.id, '?from=abc');
    t.is(badFrom.status, 400);
    t.is(badFrom.body, 'Failed to deserialize query string: from: invalid digit found in string');
  });

  test(`${store}: restart-as-new refuses running invocations, workflow runs, unknown and malformed ids`, async (t) => {
    const { stack } = t.context[store]!;
    const running = await send(stack, 'Durable/sleepy', 30_000);
    const still = await restart(stack, running);
    t.is(still.status, 409);
    t.is(still.body, `{"message":"The invocation '${running}' is still running.","restate_code":null}`);
    await stack.admin.patch(`invocations/${running}/kill`);

    const wf = await call(stack, `QuickWf/w-${store}/run`, {});
    t.is(wf.status, 200);
    const refused = await restart(stack, wf.id);
    t.is(refused.status, 422);
    t.is(
      refused.body,
      `{"message":"Restarting the invocation '${wf.id}' is not supported. Restarting workflows is not supported, and restarting invocations created using the old service protocol.","restate_code":null}`,
    );
    const unknown = await restart(stack, 'inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi');
    t.is(unknown.status, 404);
    t.is(
      unknown.body,
      `{"message":"The requested invocation 'inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi' does not exist","restate_code":null}`,
    );
    const garbage = await restart(stack, 'garbage');
    t.is(garbage.status, 400);
    t.is(
      garbage.body,
      `{"message":"The request field 'invocation_id' is invalid. Reason: bad format","restate_code":null}`,
    );
  });

  test(`${store}: purge-journal keeps the output, drops the journal, and then restart has no input`, async (t) => {
    const { stack } = t.context[store]!;
    const running = await send(stack, 'Durable/sleepy', 30_000);
    const early = await stack.admin.patch(`invocations/${running}/purge-journal`);
    t.is(early.statusCode, 409);
    t.is(early.body, `{"message":"The invocation '${running}' is not yet completed.","restate_code":null}`);
    await stack.admin.patch(`invocations/${running}/kill`);

    const done = await call(stack, 'Durable/greet', 'pj');
    const purged = await stack.admin.patch(`v4/invocations/${done.id}/purge-journal`);
    t.is(purged.statusCode, 200);
    t.is(purged.body, '');
    const out = await stack.ingress.get(`restate/output/${done.id}`);
    t.is(out.statusCode, 200);
    t.is(out.body, '"hi pj"');
    t.deepEqual(await query(stack, `SELECT index FROM sys_journal WHERE id = '${done.id}'`), []);
    t.deepEqual(await query(stack, `SELECT status FROM sys_invocation WHERE id = '${done.id}'`), [
      { status: 'completed' },
    ]);
    const gone = await restart(stack, done.id);
    t.is(gone.status, 410);
    t.is(
      gone.body,
      `{"message":"The invocation '${done.id}' cannot be restarted because the input is not available. This indicates that the journal was already purged, or not retained at all.","restate_code":null}`,
    );
    t.is((await stack.admin.patch('invocations/inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi/purge-journal')).statusCode, 404);
  });

  test(`${store}: POST /services/{name}/state replaces a key's state after the running exclusive invocation`, async (t) => {
    const { stack } = t.context[store]!;
    const key = `st-${store}`;
    t.is((await call(stack, `Counter/${key}/add`, { delta: 5 })).body, '5');
    // An add that reads, sleeps, then writes: the mutation must wait for it, not interleave.
    const adding = await send(stack, `Counter/${key}/add`, { delta: 1, pauseMs: 1000 });
    await waitFor(
      async () =>
        (await query(stack, `SELECT status FROM sys_invocation WHERE id = '${adding}'`))[0]?.['status'] !== 'pending',
      5000,
    );
    const res = await stack.admin.post('v4/services/Counter/state', {
      json: { object_key: key, new_state: { count: json(100) } },
    });
    t.is(res.statusCode, 202);
    t.is(res.body, '');
    t.is((await stack.ingress.get(`restate/attach/${adding}`)).body, '6');
    await waitFor(async () => (await call(stack, `Counter/${key}/get`, null)).body === '100', 5000);
    t.deepEqual(
      await query(stack, `SELECT key, value_utf8 FROM state WHERE service_name = 'Counter' AND service_key = '${key}'`),
      [{ key: 'count', value_utf8: '100' }],
    );

    // A stale version is accepted and dropped; the current one applies. The version of {count:"100"}:
    const stale = await stack.admin.post('services/Counter/state', {
      json: { object_key: key, version: 'bogus', new_state: { count: '7' } },
    });
    t.is(stale.statusCode, 202);
    t.is((await call(stack, `Counter/${key}/get`, null)).body, '100');
    const current = 'ryJoLzZL5TaNigeNpXzzRf09m2JQLgKP__QIMEZVyP8';
    const ok = await stack.admin.post('services/Counter/state', {
      json: { object_key: key, version: current, new_state: { count: '7', other: [1, 2] } },
    });
    t.is(ok.statusCode, 202);
    await waitFor(async () => (await call(stack, `Counter/${key}/get`, null)).body === '7', 5000);
    t.deepEqual(
      await query(
        stack,
        `SELECT key, value FROM state WHERE service_name = 'Counter' AND service_key = '${key}' ORDER BY key`,
      ),
      [
        { key: 'count', value: '37' },
        { key: 'other', value: '0102' },
      ],
    );
    // A key only an admin mutation ever touched is listed too.
    await stack.admin.post('services/Counter/state', {
      json: { object_key: `fresh-${store}`, new_state: { count: '1' } },
    });
    const fresh = await query(stack, `SELECT service_key FROM state WHERE service_name = 'Counter'`);
    t.true(fresh.some((r) => r['service_key'] === `fresh-${store}`));
    // A scoped key's state is apart from the unscoped key's, and listed beside it when a query
    // pins service and key (as the CLI's kv get does): it lives in its scope's partition.
    t.is(
      (
        await stack.admin.post('services/Counter/state', {
          json: { object_key: key, scope: 'sc1', new_state: { count: json(9) } },
        })
      ).statusCode,
      202,
    );
    await waitFor(
      async () =>
        (
          await query(
            stack,
            `SELECT scope, value_utf8 FROM state WHERE service_name = 'Counter' AND service_key = '${key}' AND key = 'count' ORDER BY scope NULLS FIRST`,
          )
        ).length === 2,
      5000,
    );
    t.deepEqual(
      await query(
        stack,
        `SELECT scope, value_utf8 FROM state WHERE service_name = 'Counter' AND service_key = '${key}' AND key = 'count' ORDER BY scope NULLS FIRST`,
      ),
      // NULL columns are left out of JSON rows, as the reference's writer does.
      [{ value_utf8: '7' }, { scope: 'sc1', value_utf8: '9' }],
    );
  });

  test(`${store}: POST /services/{name}/state errors`, async (t) => {
    const { admin } = t.context[store]!.stack;
    const plain = await admin.post('services/Durable/state', { json: { object_key: 'k', new_state: {} } });
    t.is(plain.statusCode, 400);
    t.is(plain.body, '{"message":"Cannot modify state for service type Service","restate_code":null}');
    const unknown = await admin.post('services/Nope/state', { json: { object_key: 'k', new_state: {} } });
    t.is(unknown.statusCode, 404);
    t.is(unknown.body, `{"message":"The requested service 'Nope' does not exist","restate_code":null}`);
    const missing = await admin.post('services/Counter/state', {
      body: '{"new_state":{"count":[49]}}',
      headers: { 'content-type': 'application/json' },
    });
    t.is(missing.statusCode, 422);
    t.is(missing.headers['content-type'], 'text/plain; charset=utf-8');
    t.is(
      missing.body,
      'Failed to deserialize the JSON body into the target type: missing field `object_key` at line 1 column 28',
    );
  });

  test(`${store}: resume?deployment= moves a paused invocation, and only a paused or suspended one`, async (t) => {
    const { stack } = t.context[store]!;
    // Shown as pinned once the SDK stored its first entry (the Sleep), as in Restate; the sleep
    // is long enough for that on a busy machine.
    const id = await send(stack, 'Durable/sleepy', 8000);
    await waitFor(
      async () =>
        (await query(stack, `SELECT pinned_deployment_id FROM sys_invocation WHERE id = '${id}'`))[0]?.[
          'pinned_deployment_id'
        ] !== undefined,
      7000,
    );
    const [{ pinned_deployment_id: dp }] = (await query(
      stack,
      `SELECT pinned_deployment_id FROM sys_invocation WHERE id = '${id}'`,
    )) as [{ pinned_deployment_id: string }];
    const bad = await stack.admin.patch(`invocations/${id}/resume?deployment=dp_nope`);
    t.is(bad.statusCode, 400);
    t.is(
      bad.body,
      `{"message":"The query parameter 'deployment' is invalid. Reason: unrecognized codec version","restate_code":null}`,
    );
    const running = await stack.admin.patch(`invocations/${id}/resume?deployment=${dp}`);
    t.is(running.statusCode, 409);
    t.is(
      running.body,
      `{"message":"The invocation '${id}' is still running or the deployment id is not pinned yet, deployment id cannot be changed.","restate_code":null}`,
    );
    t.is((await stack.admin.patch(`invocations/${id}/pause`)).statusCode, 202);
    t.is((await stack.admin.patch(`invocations/${id}/resume?deployment=latest`)).statusCode, 200);
    t.is((await stack.ingress.get(`restate/attach/${id}`)).body, '"slept 8000"');
  });

  test(`${store}: GET /openapi is the admin API's own document`, async (t) => {
    const res = await t.context[store]!.stack.admin.get('v4/openapi');
    t.is(res.statusCode, 200);
    t.is(res.headers['content-type'], 'application/json');
    const doc = JSON.parse(res.body) as {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    t.is(doc.openapi, '3.1.0');
    t.is(doc.info.version, '1.7.12');
    t.is(doc.paths['/invocations/{invocation_id}/restart-as-new']?.['patch']?.operationId, 'restart_as_new_invocation');
    t.false('/openapi' in doc.paths);
  });
}

for (const store of nodeKinds) {
  test.serial(`${store}: a queued state mutation survives a SIGKILL and lands after the invocation`, async (t) => {
    const { stack } = t.context[store]!;
    const key = `crash-${store}`;
    const adding = await send(stack, `Counter/${key}/add`, { delta: 1, pauseMs: 1500 });
    await waitFor(
      async () =>
        (await query(stack, `SELECT status FROM sys_invocation WHERE id = '${adding}'`))[0]?.['status'] !== 'pending',
      5000,
    );
    t.is(
      (await stack.admin.post('services/Counter/state', { json: { object_key: key, new_state: { count: '50' } } }))
        .statusCode,
      202,
    );
    await stack.server.kill();
    await stack.server.restart();
    t.is((await stack.ingress.get(`restate/attach/${adding}`)).body, '1');
    await waitFor(async () => (await call(stack, `Counter/${key}/get`, null)).body === '50', 5000);
    t.pass();
  });

  // Serial tests run before the concurrent ones, so changing Durable's settings disturbs nobody.
  test.serial(
    `${store}: resume starts a backing-off invocation's next attempt at once; each failure stays in the history across a SIGKILL`,
    async (t) => {
      const { stack } = t.context[store]!;
      const policy = async (retry_policy: unknown) =>
        (
          JSON.parse((await stack.admin.patch('services/Durable', { json: { retry_policy } })).body) as {
            retry_policy: unknown;
          }
        ).retry_policy;
      const before = await policy({});
      await policy({ initial_interval: '1h', max_interval: '1h' });
      const id = await send(stack, 'Durable/flaky', { tag: `resume-backoff-${store}`, times: 1 });
      await policy(before);
      const status = async () =>
        (await query(stack, `SELECT status FROM sys_invocation WHERE id = '${id}'`))[0]?.['status'];
      await waitFor(async () => (await status()) === 'backing-off', 10_000);

      await stack.server.kill();
      await stack.redis?.restart({ kill: true });
      await stack.server.restart();
      const failures = await query(
        stack,
        `SELECT attempt, failure_json FROM sys_invocation_transitions WHERE id = '${id}' AND event = 'attemptFailed'`,
      );
      t.is(failures.length, 1);
      t.like(JSON.parse(String(failures[0]?.['failure_json'])), {
        error_code: 500,
        error_message: 'flaky failure attempt 1',
        restate_doc_error_code: 'RT0007',
      });
      t.is(await status(), 'backing-off', 'the hour-long backoff still holds');

      // The reference's admin API: "If the invocation is backing off due to a retry, this will immediately trigger the retry."
      const now = await stack.admin.patch(`invocations/${id}/resume`);
      t.is(now.statusCode, 200, now.body);
      t.is((await stack.ingress.get(`restate/attach/${id}`)).body, '"ok after 2"');
      const path = await query(
        stack,
        `SELECT from_state, event, to_state FROM sys_invocation_transitions WHERE id = '${id}' ORDER BY index`,
      );
      t.deepEqual(
        path.slice(-3).map((r) => `${r['from_state']} ${r['event']} ${r['to_state']}`),
        ['running attemptFailed backingOff', 'backingOff timerDue running', 'running complete completed'],
      );

      const again = await stack.admin.patch(`invocations/${id}/resume`);
      t.is(again.statusCode, 409);
      t.is(again.body, `{"message":"The invocation '${id}' is completed, cannot be resumed.","restate_code":null}`);
    },
  );

  test.serial(`${store}: PATCH /services settings apply to new invocations`, async (t) => {
    const { stack } = t.context[store]!;
    const patch = (json: unknown) => stack.admin.patch('services/Durable', { json });

    t.is((await patch({ public: false })).statusCode, 200);
    const hidden = await stack.ingress.post('restate/call/Durable/greet', { json: 'x' });
    t.is(hidden.statusCode, 400);
    t.is(hidden.body, '{"code":400,"message":"the invoked service is not public","source":"ingress"}');
    await patch({ public: true });
    t.is((await stack.ingress.post('restate/call/Durable/greet', { json: 'x' })).statusCode, 200);

    // With a short inactivity timeout a sleeping handler is asked to suspend (1 minute by default).
    t.is((await patch({ inactivity_timeout: '100ms' })).statusCode, 200);
    const sleeper = await send(stack, 'Durable/sleepy', 30_000);
    await waitFor(
      async () =>
        (await query(stack, `SELECT status FROM sys_invocation WHERE id = '${sleeper}'`))[0]?.['status'] ===
        'suspended',
      5000,
    );
    await patch({ inactivity_timeout: '1m' });
    await stack.admin.patch(`invocations/${sleeper}/kill`);

    // A short journal retention: a completed call is forgotten after it.
    await patch({ journal_retention: '1s' });
    const done = await call(stack, 'Durable/greet', 'ret');
    t.is((await stack.ingress.get(`restate/output/${done.id}`)).statusCode, 200);
    await waitFor(async () => (await stack.ingress.get(`restate/output/${done.id}`)).statusCode === 404, 5000);
    await patch({ journal_retention: '1d' });
    t.pass();
  });
}
