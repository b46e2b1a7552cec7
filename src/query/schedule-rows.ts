/**
 * `sys_schedule` (ours, issue 26): one row per schedule, from the schedule records
 * (model/schedules.ts): its target and timing, whether it is paused, its next and last fire,
 * the invocation of the last one.
 */
import { readSchedules } from '../model/schedules.js';
import type { Store } from '../store/types.js';
import type { Row } from './result.js';

export async function scheduleRows(store: Store, partitions: number): Promise<Row[]> {
  return (await readSchedules(store, partitions)).map((s) => ({
    id: s.id,
    target: [s.target.service, s.target.key, s.target.handler].filter((p) => p !== undefined).join('/'),
    target_service_name: s.target.service,
    target_service_key: s.target.key,
    target_handler_name: s.target.handler,
    spec: s.cron ?? s.interval,
    timezone: s.timezone,
    overlap: s.overlap,
    catch_up: s.catchUp,
    paused: s.paused,
    next_fire_at: s.paused ? undefined : s.next,
    last_fire_at: s.lastFireAt,
    last_invocation_id: s.lastInvocationId,
    fires: BigInt(s.fires),
    created_at: s.createdAt,
  }));
}
