/**
 * Schedules (issue 26, restatedev/restate#12): cron expressions (seconds, time zones) and ISO
 * 8601 repeating intervals that start one invocation per fire time, through the admin API
 * (`/schedules`); overlap and catch-up policies; a workflow target with a fresh id per fire;
 * `sys_schedule`; exactly one invocation per fire time across SIGKILLs of the server (and of
 * redis-server). Both stores, real SDK services (services/scheduled.mjs records each fire time
 * a handler ran for).
 */
import anyTest, { type TestFn } from 'ava';
import { sqlRows, stacksPerStore, storeKinds, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;
stacksPerStore(test, { serviceFile: 'scheduled.mjs' });

interface View {
  id: string;
  paused: boolean;
  next_fire_at?: string;
  next_fire_times: string[];
  last_invocation_id?: string;
  fires: number;
  recent_runs: Array<{ at: string; outcome: string; invocation_id?: string; error?: string }>;
  [field: string]: unknown;
}

async function create(stack: Stack, body: Record<string, unknown>): Promise<View> {
  const res = await stack.admin.post('schedules', { json: body });
  if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`);
  return JSON.parse(res.body) as View;
}

async function view(stack: Stack, id: string): Promise<View> {
  const res = await stack.admin.get(`schedules/${id}`);
  if (res.statusCode !== 200) throw new Error(`get ${id}: ${res.statusCode} ${res.body}`);
  return JSON.parse(res.body) as View;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (iso: string) => Date.parse(iso);

/** Invocations made by the schedule's fires, by fire time (from their idempotency keys). */
async function invocationsByFire(stack: Stack, id: string): Promise<Map<number, number>> {
  const rows = await sqlRows(
    stack.admin,
    `select idempotency_key as k, count(*) as n from sys_invocation where idempotency_key like 'schedule/${id}/%' group by idempotency_key`,
  );
  return new Map(rows.map((r) => [Number(String(r['k']).split('/')[2]), Number(r['n'])]));
}

/** How often the service ran for each fire time of `tag` (services/scheduled.mjs). */
async function runsByFire(stack: Stack, tag: string): Promise<Map<number, number>> {
  const counts = await stack.counts();
  const out = new Map<number, number>();
  for (const [k, n] of Object.entries(counts)) if (k.startsWith(`${tag}|`)) out.set(ms(k.slice(tag.length + 1)), n);
  return out;
}

/** The fire times from the first to the last, every `stepMs`: none missing. */
function consecutive(times: number[], stepMs: number): boolean {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted.every((t, i) => i === 0 || t - sorted[i - 1]! === stepMs);
}

async function stopFiring(stack: Stack, id: string): Promise<View> {
  const res = await stack.admin.post(`schedules/${id}/pause`);
  if (res.statusCode !== 200) throw new Error(`pause: ${res.statusCode} ${res.body}`);
  return JSON.parse(res.body) as View;
}

for (const store of storeKinds) {
  test(`${store}: create, read, change, pause, resume, delete; bad schedules are refused with the reason`, async (t) => {
    const stack = t.context[store]!;
    const id = `${store}-crud`;
    const made = await create(stack, {
      id,
      target: { service: 'Ticks', key: 'crud', handler: 'tick' },
      input: 1,
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      paused: true,
    });
    t.like(made, {
      id,
      paused: true,
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      overlap: 'skip',
      catch_up: 'one',
      catch_up_window: '1h',
      input: 1,
      fires: 0,
    });
    t.deepEqual(made.next_fire_times, [], 'a paused schedule has no coming fires');
    const resumed = JSON.parse((await stack.admin.post(`schedules/${id}/resume`)).body) as View;
    t.is(resumed.next_fire_times.length, 5);
    t.true(
      resumed.next_fire_times.every((f) => /T0[78]:00:00\.000000000Z$/.test(f)),
      resumed.next_fire_times.join(),
    );
    t.is(resumed.next_fire_at, resumed.next_fire_times[0]);
    const listed = JSON.parse((await stack.admin.get('schedules')).body) as { schedules: View[] };
    t.true(listed.schedules.some((s) => s.id === id));
    const changed = await stack.admin.patch(`schedules/${id}`, {
      json: { interval: 'R/2030-01-01T00:00:00Z/PT1H', overlap: 'allow_all' },
    });
    t.is(changed.statusCode, 200, changed.body);
    t.like(JSON.parse(changed.body), {
      interval: 'R/2030-01-01T00:00:00Z/PT1H',
      cron: undefined,
      timezone: undefined,
      overlap: 'allow_all',
      next_fire_at: '2030-01-01T00:00:00.000000000Z',
    });
    const [row] = await sqlRows(
      stack.admin,
      `select target, spec, paused, next_fire_at, overlap from sys_schedule where id = '${id}'`,
    );
    t.deepEqual(row, {
      target: 'Ticks/crud/tick',
      spec: 'R/2030-01-01T00:00:00Z/PT1H',
      paused: false,
      next_fire_at: '2030-01-01T00:00:00Z',
      overlap: 'allow_all',
    });
    t.is(
      (
        await stack.admin.post('schedules', {
          json: { id, target: { service: 'Ticks', key: 'k', handler: 'tick' }, cron: '* * * * *' },
        })
      ).statusCode,
      409,
    );
    const preview = JSON.parse(
      (await stack.admin.post('schedules/preview', { json: { cron: '0 0 1 * *', timezone: 'UTC' } })).body,
    ) as { next_fire_times: string[] };
    t.is(preview.next_fire_times.length, 5);
    t.true(preview.next_fire_times.every((f) => /-01T00:00:00\.000000000Z$/.test(f)));
    t.is((await stack.admin.delete(`schedules/${id}`)).statusCode, 202);
    const gone = await stack.admin.get(`schedules/${id}`);
    t.is(gone.statusCode, 404);
    t.is(JSON.parse(gone.body).message, `the schedule '${id}' does not exist`);

    const refused = async (body: unknown, status: number) => {
      const res = await stack.admin.post('schedules', { json: body });
      t.is(res.statusCode, status, res.body);
      return res.body.startsWith('{') ? String(JSON.parse(res.body).message) : res.body;
    };
    const target = { service: 'Ticks', key: 'k', handler: 'tick' };
    t.regex(await refused({ target, cron: '* * * *' }, 400), /has 5 fields .* or 6/);
    t.is(
      await refused({ target, cron: '0 * * * *', timezone: 'Nowhere/City' }, 400),
      "unknown time zone 'Nowhere/City': use an IANA name such as Europe/Berlin or UTC",
    );
    t.regex(
      await refused({ target, cron: '0 * * * *', interval: 'R/2030-01-01T00:00:00Z/PT1H' }, 400),
      /either a cron expression .* or an interval/,
    );
    t.regex(await refused({ target }, 400), /either a cron expression/);
    t.is(
      await refused({ target: { service: 'Nope', handler: 'x' }, cron: '* * * * *' }, 400),
      "service 'Nope' not found, make sure to register the service before scheduling it",
    );
    t.is(
      await refused({ target: { service: 'Ticks', handler: 'tick' }, cron: '* * * * *' }, 400),
      "'Ticks' is a virtual object: its target needs a key",
    );
    t.regex(await refused({ cron: '* * * * *' }, 422), /missing field `target`/);
    t.regex(
      await refused({ target, cron: '* * * * *', overlap: 'sometimes' }, 422),
      /overlap: unknown variant `sometimes`, expected one of `skip`, `buffer_one`, `allow_all`/,
    );
    t.regex(await refused({ id: 'no spaces', target, cron: '* * * * *' }, 400), /bad schedule id 'no spaces'/);
  });

  test.serial(
    `${store}: a */2 s cron fires once per fire time, in order, and an R3 interval three times`,
    async (t) => {
      const stack = t.context[store]!;
      const id = `${store}-every2`;
      await create(stack, {
        id,
        target: { service: 'Ticks', key: id, handler: 'tick' },
        input: 1,
        cron: '*/2 * * * * *',
        overlap: 'allow_all',
      });
      const start = Math.ceil((Date.now() + 1500) / 1000) * 1000;
      await create(stack, {
        id: `${id}-r3`,
        target: { service: 'Ticks', key: `${id}-r3`, handler: 'tick' },
        input: 10,
        interval: `R3/${new Date(start).toISOString()}/PT2S`,
      });
      await waitFor(async () => (await view(stack, id)).fires >= 4, 20_000, 200);
      const done = await stopFiring(stack, id);
      const fires = await invocationsByFire(stack, id);
      t.true(fires.size >= 4);
      t.deepEqual(
        [...fires.values()].filter((n) => n !== 1),
        [],
        'one invocation per fire time',
      );
      t.true(consecutive([...fires.keys()], 2000), [...fires.keys()].join());
      t.true([...fires.keys()].every((at) => at % 2000 === 0));
      await waitFor(async () => (await runsByFire(stack, `tick:${id}`)).size === fires.size, 10_000);
      const [row] = await sqlRows(
        stack.admin,
        `select last_invocation_id, fires, paused from sys_schedule where id = '${id}'`,
      );
      t.deepEqual(row, { last_invocation_id: done.last_invocation_id, fires: fires.size, paused: true });

      await waitFor(async () => (await view(stack, `${id}-r3`)).fires === 3, 20_000, 200);
      await sleep(2500);
      const r3 = await view(stack, `${id}-r3`);
      t.is(r3.fires, 3, 'R3: three fires, then none');
      t.is(r3.next_fire_at, undefined);
      t.deepEqual([...(await invocationsByFire(stack, `${id}-r3`)).keys()].sort(), [start, start + 2000, start + 4000]);
      const state = await stack.ingress.post(`restate/call/Ticks/${id}-r3/tick`, { json: 0 });
      t.is(state.body, '30');
    },
  );

  test.serial(
    `${store}: across SIGKILLs of the server${store === 'redis' ? ' and of redis-server' : ''}, no fire time in the catch-up window is lost, none fires twice`,
    async (t) => {
      const stack = t.context[store]!;
      const id = `${store}-kill`;
      await create(stack, {
        id,
        target: { service: 'Ticks', key: id, handler: 'tick' },
        input: 1,
        cron: '*/2 * * * * *',
        overlap: 'allow_all',
        catch_up: 'all',
        catch_up_window: '1h',
      });
      for (const round of [0, 1]) {
        await waitFor(async () => (await view(stack, id)).fires >= 2 + round * 4, 30_000, 100);
        const redis = round === 1 ? stack.redis : undefined;
        await redis?.halt({ kill: true });
        await stack.server.kill();
        // Down for some fire times.
        await sleep(4500);
        await redis?.resume();
        await stack.server.restart();
      }
      await waitFor(async () => (await view(stack, id)).fires >= 14, 40_000, 200);
      await stopFiring(stack, id);
      const fires = await invocationsByFire(stack, id);
      t.log(`${store}: ${fires.size} fire times, from ${new Date(Math.min(...fires.keys())).toISOString()}`);
      t.deepEqual(
        [...fires.values()].filter((n) => n !== 1),
        [],
        'one invocation per fire time',
      );
      t.true(consecutive([...fires.keys()], 2000), `no fire time lost: ${[...fires.keys()].sort().join()}`);
      await waitFor(async () => (await runsByFire(stack, `tick:${id}`)).size >= fires.size, 20_000);
      const runs = await runsByFire(stack, `tick:${id}`);
      t.deepEqual([...runs.keys()].sort(), [...fires.keys()].sort(), 'the service ran for each fire time');
      // A run cut by a kill between its step and the step's record runs it again (ctx.run is at least once).
      t.true([...runs.values()].reduce((a, b) => a + b, 0) <= fires.size + 2);
      const state = await stack.ingress.post(`restate/call/Ticks/${id}/tick`, { json: 0 });
      t.is(Number(state.body), fires.size, 'each fire added once');
    },
  );

  test.serial(
    `${store}: catch-up: one fire for the missed times, or each within the window; older ones are missed`,
    async (t) => {
      const stack = t.context[store]!;
      const one = `${store}-one`;
      const windowed = `${store}-window`;
      await create(stack, {
        id: one,
        target: { service: 'Ticks', key: one, handler: 'tick' },
        cron: '* * * * * *',
        overlap: 'allow_all',
        catch_up: 'one',
      });
      await create(stack, {
        id: windowed,
        target: { service: 'Ticks', key: windowed, handler: 'tick' },
        cron: '* * * * * *',
        overlap: 'allow_all',
        catch_up: 'all',
        catch_up_window: '3s',
      });
      await waitFor(
        async () => (await view(stack, one)).fires >= 1 && (await view(stack, windowed)).fires >= 1,
        20_000,
        100,
      );
      await stack.server.kill();
      await sleep(7000);
      await stack.server.restart();
      await waitFor(async () => (await view(stack, one)).recent_runs.some((r) => r.outcome === 'missed'), 20_000, 100);
      await waitFor(
        async () => (await view(stack, windowed)).recent_runs.some((r) => r.outcome === 'missed'),
        20_000,
        100,
      );
      const a = await stopFiring(stack, one);
      const b = await stopFiring(stack, windowed);
      // The restart's first fire: the missed times before its last are recorded, that one started.
      const gapOf = (v: View) => {
        const missed = v.recent_runs.filter((r) => r.outcome === 'missed').map((r) => ms(r.at));
        const started = v.recent_runs.filter((r) => r.outcome === 'started').map((r) => ms(r.at));
        return {
          missed,
          startedAfterGap: started.filter((at) => at > Math.min(...missed) && at < Math.max(...missed) + 1500),
        };
      };
      const gapOne = gapOf(a);
      t.true(gapOne.missed.length >= 4, `one: ${gapOne.missed.length} missed`);
      t.is(gapOne.startedAfterGap.length, 1, 'one fire for all the missed times');
      const gapWindow = gapOf(b);
      const caughtUp = b.recent_runs.filter((r) => r.outcome === 'started' && ms(r.at) > Math.max(...gapWindow.missed));
      t.true(gapWindow.missed.length >= 2, `window: ${gapWindow.missed.length} older than 3 s missed`);
      t.true(caughtUp.length >= 3, `window: the times of the last 3 s caught up, ${caughtUp.length}`);
      t.true(
        consecutive([...gapWindow.missed, ...caughtUp.map((r) => ms(r.at))], 1000),
        'every missed time either missed or caught up',
      );
    },
  );

  test.serial(`${store}: overlap: skip, buffer one, allow all`, async (t) => {
    const stack = t.context[store]!;
    const ids = { skip: `${store}-skip`, buffer_one: `${store}-buffer`, allow_all: `${store}-all` } as const;
    for (const [overlap, id] of Object.entries(ids)) {
      await create(stack, {
        id,
        target: { service: 'Slow', handler: 'work' },
        input: 2500,
        cron: '* * * * * *',
        overlap,
      });
    }
    await sleep(6500);
    const views = Object.fromEntries(
      await Promise.all(Object.entries(ids).map(async ([k, id]) => [k, await stopFiring(stack, id)] as const)),
    );
    const started = (v: View) => v.recent_runs.filter((r) => r.outcome === 'started').map((r) => ms(r.at));
    const skipped = (v: View) => v.recent_runs.filter((r) => r.outcome === 'skipped').length;
    // skip: a run of 2.5 s every second: starts about every 3 s, the times between are skipped.
    const skip = started(views['skip']!);
    t.true(skip.length >= 2 && skip.length <= 3, `skip started ${skip.length}`);
    t.true(
      skip.every((at, i) => i === 0 || at - skip[i - 1]! >= 3000),
      skip.join(),
    );
    t.true(skipped(views['skip']!) >= 3);
    // allow_all: one per second, overlapping.
    t.true(started(views['allow_all']!).length >= 5, `allow_all started ${started(views['allow_all']!).length}`);
    t.is(skipped(views['allow_all']!), 0);
    // buffer_one: the fire held back starts as soon as the run before ends (its fire time is older than its start).
    const buffered = views['buffer_one']!;
    t.true(started(buffered).length >= 2, `buffer_one started ${started(buffered).length}`);
    t.true(skipped(buffered) >= 1);
    const bufferedRuns = await sqlRows(
      stack.admin,
      `select idempotency_key as k, running_at from sys_invocation where idempotency_key like 'schedule/${ids.buffer_one}/%' order by running_at`,
    );
    const lateStarts = bufferedRuns.filter(
      (r) => ms(String(r['running_at'])) - Number(String(r['k']).split('/')[2]) > 1000,
    );
    t.true(lateStarts.length >= 1, 'a held-back fire started after its time, when the previous ended');
  });

  test.serial(`${store}: a workflow target gets a fresh workflow id per fire; trigger fires now`, async (t) => {
    const stack = t.context[store]!;
    const id = `${store}-report`;
    await create(stack, {
      id,
      target: { service: 'Report', handler: 'run' },
      cron: '*/2 * * * * *',
      overlap: 'allow_all',
    });
    await waitFor(async () => (await view(stack, id)).fires >= 2, 20_000, 200);
    const triggered = JSON.parse((await stack.admin.post(`schedules/${id}/trigger`)).body) as View;
    const last = triggered.recent_runs[triggered.recent_runs.length - 1]!;
    t.is(last.outcome, 'triggered');
    await stopFiring(stack, id);
    const keys = (
      await sqlRows(
        stack.admin,
        `select target_service_key as k from sys_invocation where target_service_name = 'Report' and target_service_key like '${id}-%'`,
      )
    ).map((r) => String(r['k']));
    t.true(keys.length >= 3);
    t.is(new Set(keys).size, keys.length, 'one workflow id per fire');
    t.true(
      keys.every((k) => /^.+-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(k)),
      keys.join(),
    );
    const out = await stack.ingress.get(`restate/attach/${last.invocation_id}`);
    t.is(out.statusCode, 200);
    t.true(keys.includes(JSON.parse(out.body) as string));
  });
}
