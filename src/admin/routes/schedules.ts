/**
 * `/schedules` (ours, issue 26): create, list, read, change, delete, pause, resume and trigger
 * schedules, and preview a timing's next fire times. Changes run on the owner of the
 * schedule's partition (`Runtime.changeSchedule`); reads come from the store on any node.
 */
import type Router from '@koa/router';
import { NotFound } from '../../errors.js';
import type { PersistedSchedule } from '../../model/schedules.js';
import { formatDuration } from '../../registry/durations.js';
import type { Registry } from '../../registry/registry.js';
import { fireTimesOf, fireTimesOfSchedule, nextFireTimes } from '../../registry/schedule-spec.js';
import type { Runtime, ScheduleAction } from '../../runtime/runtime.js';
import { rfc3339Nanos } from '../../timestamps.js';
import { readJsonBody, sendEmpty, sendJson } from '../http-io.js';
import { decodeCreateSchedule, decodePreview, decodeUpdateSchedule, scheduleId } from '../schedule-requests.js';

/** How many coming fire times a schedule's view lists. */
const SHOWN_FIRE_TIMES = 5;

const iso = (ms: number | undefined) => (ms === undefined ? undefined : rfc3339Nanos(ms));

export function scheduleView(s: PersistedSchedule, now = Date.now()) {
  const coming = s.paused
    ? []
    : nextFireTimes(fireTimesOfSchedule(s), Math.max(now, (s.next ?? now + 1) - 1), SHOWN_FIRE_TIMES);
  return {
    id: s.id,
    target: s.target,
    input: s.input === undefined ? undefined : (JSON.parse(s.input) as unknown),
    cron: s.cron,
    timezone: s.timezone,
    interval: s.interval,
    overlap: s.overlap,
    catch_up: s.catchUp,
    catch_up_window: formatDuration(s.catchUpWindow),
    paused: s.paused,
    created_at: iso(s.createdAt),
    next_fire_at: s.paused ? undefined : iso(s.next),
    next_fire_times: coming.map((t) => rfc3339Nanos(t)),
    buffered_fire_at: iso(s.buffered),
    last_fire_at: iso(s.lastFireAt),
    last_invocation_id: s.lastInvocationId,
    fires: s.fires,
    recent_runs: s.recent.map((r) => ({
      at: rfc3339Nanos(r.at),
      outcome: r.outcome,
      invocation_id: r.invocationId,
      error: r.error,
    })),
  };
}

export function scheduleRoutes(router: Router, runtime: Runtime, registry: Registry): void {
  const changed = async (action: ScheduleAction): Promise<PersistedSchedule> => {
    const s = await runtime.changeSchedule(action);
    if (!s) throw new NotFound(`the schedule '${'id' in action ? action.id : action.definition.id}' does not exist`);
    return s;
  };
  const existing = async (id: string): Promise<PersistedSchedule> => {
    const s = await runtime.schedule(scheduleId(id));
    if (!s) throw new NotFound(`the schedule '${id}' does not exist`);
    return s;
  };

  router.post('/schedules/preview', (ctx) => {
    const spec = decodePreview(readJsonBody(ctx));
    sendJson(ctx, 200, {
      next_fire_times: nextFireTimes(fireTimesOf(spec), Date.now(), SHOWN_FIRE_TIMES).map((t) => rfc3339Nanos(t)),
    });
  });
  router.post('/schedules', async (ctx) => {
    sendJson(ctx, 201, scheduleView(await changed(decodeCreateSchedule(readJsonBody(ctx), registry))));
  });
  router.get('/schedules', async (ctx) => {
    const now = Date.now();
    sendJson(ctx, 200, { schedules: (await runtime.schedules()).map((s) => scheduleView(s, now)) });
  });
  router.get('/schedules/:id', async (ctx) => {
    sendJson(ctx, 200, scheduleView(await existing(ctx.params['id'] ?? '')));
  });
  router.patch('/schedules/:id', async (ctx) => {
    const current = await existing(ctx.params['id'] ?? '');
    sendJson(
      ctx,
      200,
      scheduleView(await changed(decodeUpdateSchedule(readJsonBody(ctx), registry, current.id, current))),
    );
  });
  router.delete('/schedules/:id', async (ctx) => {
    await runtime.changeSchedule({ type: 'delete', id: scheduleId(ctx.params['id'] ?? '') });
    sendEmpty(ctx, 202);
  });
  for (const type of ['pause', 'resume', 'trigger'] as const) {
    router.post(`/schedules/:id/${type}`, async (ctx) => {
      sendJson(ctx, 200, scheduleView(await changed({ type, id: scheduleId(ctx.params['id'] ?? '') })));
    });
  }
}
