/**
 * Schedules (issue 26) as stored: one record per schedule in the partition of its id, with its
 * definition and where its fires stand, and one timer (no owner) at its next fire. A fire's
 * invocation has an id derived from (schedule, fire time): a workflow's run from its workflow
 * id (the template filled with the fire time), any other from the idempotency key of the fire
 * (`fireIdempotencyKey`), so a fire tried again finds the invocation it made.
 */
import type { Store } from '../store/types.js';
import { partitionOf } from './partitioning.js';
import { RecordKind } from './persisted.js';
import { partitionKeyOf } from '../protocol/ids.js';

/** What happens to a fire while the schedule's previous run still goes on. */
export type OverlapPolicy = 'skip' | 'buffer_one' | 'allow_all';
/** After downtime: one fire for all the missed fire times, or one fire for each (within the window). */
export type CatchUpPolicy = 'one' | 'all';

export interface ScheduleTarget {
  service: string;
  handler: string;
  /** An object key, or a workflow id template (`{schedule_id}`, `{fire_time}` filled per fire). */
  key?: string;
}

export interface ScheduleRun {
  /** The fire time (epoch ms); for a trigger, when it was asked. */
  at: number;
  /**
   * `started` (its invocation), `triggered` (by hand), `skipped` (the previous run still went
   * on, or the fire was caught up with a later one), `missed` (past the catch-up window),
   * `failed` (the target is gone or refused it).
   */
  outcome: 'started' | 'triggered' | 'skipped' | 'missed' | 'failed';
  invocationId?: string;
  error?: string;
}

/** The runs a schedule keeps for the UI, newest last. */
export const RECENT_RUNS = 20;

export interface PersistedSchedule {
  id: string;
  target: ScheduleTarget;
  /** The invocation's input as JSON text; absent: none. */
  input?: string;
  cron?: string;
  timezone?: string;
  interval?: string;
  overlap: OverlapPolicy;
  catchUp: CatchUpPolicy;
  /** Missed fire times older than this (ms) are not caught up. */
  catchUpWindow: number;
  paused: boolean;
  createdAt: number;
  /** The next fire time not yet handled; absent when the schedule has no fire left. */
  next?: number;
  /** A fire held back (`buffer_one`) until the previous run ends. */
  buffered?: number;
  lastFireAt?: number;
  lastInvocationId?: string;
  fires: number;
  recent: ScheduleRun[];
}

/** Where a schedule lives: the partition of its id. */
export function schedulePartition(id: string, partitions: number): number {
  return partitionOf(partitionKeyOf(id), partitions);
}

/** The idempotency key of a fire: what makes its invocation's id (schedule, fire time). */
export function fireIdempotencyKey(id: string, at: number): string {
  return `schedule/${id}/${at}`;
}

/** A workflow id template filled for one fire. */
export function fillKey(template: string, id: string, at: number): string {
  return template.replaceAll('{schedule_id}', id).replaceAll('{fire_time}', new Date(at).toISOString());
}

/** The default workflow id of a fire: one per schedule and fire time. */
export const DEFAULT_WORKFLOW_KEY = '{schedule_id}-{fire_time}';

/** Every schedule, by id. */
export async function readSchedules(store: Store, partitions: number): Promise<PersistedSchedule[]> {
  const out: PersistedSchedule[] = [];
  for (let p = 0; p < partitions; p++) {
    for (const id of await store.listRecords(p, RecordKind.schedule)) {
      const s = readSchedule(await store.getRecord(p, RecordKind.schedule, id));
      if (s) out.push(s);
    }
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A stored record read back; undefined when it is not one. */
export function readSchedule(raw: unknown): PersistedSchedule | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const s = raw as Partial<PersistedSchedule>;
  return typeof s.id === 'string' && typeof s.target === 'object' ? (s as PersistedSchedule) : undefined;
}
