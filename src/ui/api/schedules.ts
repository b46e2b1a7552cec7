/** The schedules of `/schedules` (redstate's own, issue 26) as the Schedules page uses them. */
import { request } from './http';

export interface ScheduleTarget {
  service: string;
  handler: string;
  key?: string;
}

export interface ScheduleRun {
  at: string;
  outcome: 'started' | 'triggered' | 'skipped' | 'missed' | 'failed';
  invocation_id?: string;
  error?: string;
}

export interface Schedule {
  id: string;
  target: ScheduleTarget;
  input?: unknown;
  cron?: string;
  timezone?: string;
  interval?: string;
  overlap: 'skip' | 'buffer_one' | 'allow_all';
  catch_up: 'one' | 'all';
  catch_up_window: string;
  paused: boolean;
  created_at: string;
  next_fire_at?: string;
  next_fire_times: string[];
  buffered_fire_at?: string;
  last_fire_at?: string;
  last_invocation_id?: string;
  fires: number;
  recent_runs: ScheduleRun[];
}

/** A create or change body: the timing is `cron` (+ `timezone`) or `interval`. */
export interface ScheduleBody {
  id?: string;
  target: ScheduleTarget;
  input?: unknown;
  cron?: string;
  timezone?: string;
  interval?: string;
  overlap: Schedule['overlap'];
  catch_up: Schedule['catch_up'];
  catch_up_window: string;
}

export type Timing = { cron: string; timezone: string } | { interval: string };

export const listSchedules = async () => (await request<{ schedules: Schedule[] }>('GET', '/schedules')).schedules;
export const createSchedule = (body: ScheduleBody) => request<Schedule>('POST', '/schedules', body);
export const updateSchedule = (id: string, body: Omit<ScheduleBody, 'id'>) =>
  request<Schedule>('PATCH', `/schedules/${encodeURIComponent(id)}`, body);
export const deleteSchedule = (id: string) => request<void>('DELETE', `/schedules/${encodeURIComponent(id)}`);
export const scheduleAction = (id: string, action: 'pause' | 'resume' | 'trigger') =>
  request<Schedule>('POST', `/schedules/${encodeURIComponent(id)}/${action}`);
export const previewSchedule = async (timing: Timing) =>
  (await request<{ next_fire_times: string[] }>('POST', '/schedules/preview', timing)).next_fire_times;
