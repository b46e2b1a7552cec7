/**
 * Schedules (issue 26): cron expressions or repeating intervals that start an invocation at
 * each fire time. A schedule is a record of the partition of its id with a timer (no owner) at
 * its next fire time (model/schedules.ts); its changes and fires run on that partition's
 * owner, one at a time per schedule.
 *
 * A fire is exactly one invocation: its id is derived from (schedule, fire time), and the
 * record moves past a fire time only in a commit after its invocation was created. A crash in
 * between fires the same time again, which finds the invocation it made (and records it).
 * After downtime the fire times missed are caught up by the schedule's policy: once for all of
 * them, or once each, within its window; older ones are recorded as missed. While the previous
 * run still goes on, a fire is skipped, held back until it ends (one at most: `buffer_one`,
 * looked at again every `BUFFER_POLL_MS`), or started anyway (`allow_all`).
 */
import { Conflict, NotFound } from '../../errors.js';
import { idempotentInvocationId, workflowRunId } from '../../model/ids.js';
import { RecordKind } from '../../model/persisted.js';
import {
  DEFAULT_WORKFLOW_KEY,
  fillKey,
  fireIdempotencyKey,
  readSchedule,
  RECENT_RUNS,
  type PersistedSchedule,
  type ScheduleRun,
} from '../../model/schedules.js';
import { timerOf } from '../../model/timers.js';
import type { Registry } from '../../registry/registry.js';
import { fireTimesOfSchedule } from '../../registry/schedule-spec.js';
import { isWorkflowRun, type EffectiveHandler } from '../../registry/types.js';
import { KeyedSerialQueue } from '../../serial-queue.js';
import type { Store, Timer, Transition } from '../../store/types.js';
import type { InvokeRequest, InvokeResult, OutputState } from '../types.js';

/** How often a held-back fire (`buffer_one`) looks whether the previous run has ended. */
const BUFFER_POLL_MS = 500;
/** Fire times looked at in one go after a long downtime; the rest are caught up by the next fire, at once (its timer is due). */
const MAX_DUE = 1000;

/** A schedule as the admin API defines it (checked there). */
export type ScheduleDefinition = Pick<
  PersistedSchedule,
  'id' | 'target' | 'input' | 'cron' | 'timezone' | 'interval' | 'overlap' | 'catchUp' | 'catchUpWindow'
>;

export type ScheduleAction =
  | { type: 'create'; definition: ScheduleDefinition; paused: boolean }
  | { type: 'update'; id: string; patch: Partial<Omit<ScheduleDefinition, 'id'>> }
  | { type: 'delete'; id: string }
  | { type: 'pause'; id: string }
  | { type: 'resume'; id: string }
  | { type: 'trigger'; id: string };

export interface SchedulesDeps {
  readonly store: Store;
  readonly registry: Registry;
  /** The runtime's face: invocations are created where their partitions are owned. */
  invoke(req: InvokeRequest, handler: EffectiveHandler): Promise<InvokeResult>;
  output(id: string): Promise<OutputState>;
  armed(partition: number, timers: Timer[]): void;
  now(): number;
}

export class Schedules {
  private readonly queue = new KeyedSerialQueue();

  constructor(private readonly deps: SchedulesDeps) {}

  /** An admin change, on the owner of the schedule's partition: answers the schedule after it (none once deleted). */
  change(partition: number, action: ScheduleAction): Promise<PersistedSchedule | undefined> {
    const id = action.type === 'create' ? action.definition.id : action.id;
    return this.queue.run(id, async () => {
      const raw = await this.deps.store.getRecord(partition, RecordKind.schedule, id);
      const current = readSchedule(raw);
      if (action.type === 'create') {
        if (current) throw new Conflict(`the schedule '${id}' exists already`);
        const now = this.deps.now();
        const s: PersistedSchedule = {
          ...action.definition,
          paused: action.paused,
          createdAt: now,
          fires: 0,
          recent: [],
        };
        return this.store(partition, withNext(s, now), raw ?? null);
      }
      if (!current) throw new NotFound(`the schedule '${id}' does not exist`);
      const now = this.deps.now();
      switch (action.type) {
        case 'delete':
          await this.deps.store.commit({
            partition,
            records: [{ kind: RecordKind.schedule, key: id, value: null, expect: raw }],
            timersRemove: [timerOf.schedule(id)],
          });
          return undefined;
        case 'update': {
          const { patch } = action;
          const next = { ...current, ...patch };
          // A new timing replaces the old one whole.
          if (patch.cron !== undefined) delete next.interval;
          if (patch.interval !== undefined) {
            delete next.cron;
            delete next.timezone;
          }
          const timing = patch.cron !== undefined || patch.interval !== undefined || patch.timezone !== undefined;
          return this.store(partition, timing ? withNext(next, now) : next, raw);
        }
        case 'pause':
          return this.store(partition, { ...current, paused: true }, raw);
        case 'resume':
          // Fire times that passed while paused are not caught up.
          return this.store(partition, current.paused ? withNext({ ...current, paused: false }, now) : current, raw);
        case 'trigger': {
          const run = await this.start(current, now, 'triggered');
          return this.store(partition, recordRun({ ...current }, run), raw);
        }
      }
    });
  }

  /** The schedule's timer fired: start what is due, as its policies say, and move on. */
  fire(partition: number, id: string): Promise<void> {
    return this.queue.run(id, async () => {
      const raw = await this.deps.store.getRecord(partition, RecordKind.schedule, id);
      const s = readSchedule(raw);
      if (!s || s.paused) {
        await this.deps.store.commit({ partition, timersRemove: [timerOf.schedule(id)] });
        return;
      }
      const now = this.deps.now();
      const next: PersistedSchedule = { ...s, recent: [...s.recent] };
      const { due, after } = dueTimes(s, now);
      const inWindow = due.filter((at) => at >= now - s.catchUpWindow);
      // `one` fires the latest time due; a batch cut at MAX_DUE is not the latest.
      const latest = after === undefined || after > now;
      const fire = s.catchUp === 'all' ? inWindow : latest ? inWindow.slice(-1) : [];
      for (const at of due) if (!fire.includes(at)) recordRun(next, { at, outcome: 'missed' });
      const buffered = s.buffered;
      delete next.buffered;
      for (const at of buffered !== undefined ? [buffered, ...fire] : fire) await this.fireAt(next, at);
      if (after === undefined) delete next.next;
      else next.next = after;
      await this.store(partition, next, raw);
    });
  }

  /** One fire time: found made already, skipped or held back for the run still going on, or started. */
  private async fireAt(s: PersistedSchedule, at: number): Promise<void> {
    const made = this.fireId(s, at);
    if (made !== undefined && (await this.deps.output(made)).state !== 'missing') {
      // Made by an earlier try of this fire whose record did not land.
      recordRun(s, { at, outcome: 'started', invocationId: made });
      return;
    }
    if (
      s.overlap !== 'allow_all' &&
      s.lastInvocationId !== undefined &&
      (await this.deps.output(s.lastInvocationId)).state === 'pending'
    ) {
      if (s.overlap === 'buffer_one' && s.buffered === undefined) s.buffered = at;
      else recordRun(s, { at, outcome: 'skipped' });
      return;
    }
    recordRun(s, await this.start(s, at, 'started'));
  }

  /** The id a fire's invocation has (derived from the schedule and the fire time); undefined when its target is gone. */
  private fireId(s: PersistedSchedule, at: number): string | undefined {
    const handler = this.deps.registry.resolveHandler(s.target.service, s.target.handler);
    if (!handler) return undefined;
    const key = keyOf(s, at, handler);
    if (isWorkflowRun(handler)) return workflowRunId(s.target.service, key!);
    return idempotentInvocationId(s.target.service, key, s.target.handler, fireIdempotencyKey(s.id, at));
  }

  /** Starts a fire's invocation; a target that is gone or refuses is recorded as failed. */
  private async start(s: PersistedSchedule, at: number, outcome: 'started' | 'triggered'): Promise<ScheduleRun> {
    const { service, handler: name } = s.target;
    const handler = this.deps.registry.resolveHandler(service, name);
    if (!handler) return { at, outcome: 'failed', error: `the handler ${service}/${name} is not registered` };
    const key = keyOf(s, at, handler);
    const req: InvokeRequest = {
      target: { service, handler: name, serviceTy: handler.service.ty, ...(key !== undefined ? { key } : {}) },
      input: Buffer.from(s.input ?? ''),
      headers: [
        ...(s.input !== undefined ? [{ key: 'content-type', value: 'application/json' }] : []),
        { key: 'x-restate-schedule-id', value: s.id },
        { key: 'x-restate-schedule-fire-time', value: new Date(at).toISOString() },
      ],
      retryPolicy: handler.retryPolicy,
      invokedBy: 'ingress',
      ...(isWorkflowRun(handler) ? {} : { idempotencyKey: fireIdempotencyKey(s.id, at) }),
    };
    try {
      const { invocationId } = await this.deps.invoke(req, handler);
      return { at, outcome, invocationId };
    } catch (err) {
      return { at, outcome: 'failed', error: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Stores the schedule (compare-and-set against what was read) with its timer at the next fire, or a poll while a fire is held back. */
  private async store(partition: number, s: PersistedSchedule, expect: unknown): Promise<PersistedSchedule> {
    const timer = timerOf.schedule(s.id);
    const wake = s.paused
      ? undefined
      : Math.min(s.next ?? Infinity, s.buffered !== undefined ? this.deps.now() + BUFFER_POLL_MS : Infinity);
    const armed: Timer | undefined = wake !== undefined && wake !== Infinity ? { ...timer, dueAt: wake } : undefined;
    const tx: Transition = {
      partition,
      records: [{ kind: RecordKind.schedule, key: s.id, value: s, expect }],
      ...(armed ? { timersAdd: [armed] } : { timersRemove: [timer] }),
    };
    await this.deps.store.commit(tx);
    if (armed) this.deps.armed(partition, [armed]);
    return s;
  }
}

/** The fire time after now, from which the schedule goes on. */
function withNext(s: PersistedSchedule, now: number): PersistedSchedule {
  const next = fireTimesOfSchedule(s).after(now);
  const out: PersistedSchedule = { ...s };
  if (next === undefined) delete out.next;
  else out.next = next;
  return out;
}

/** The fire times due by `now` (from the stored next one on), and the first one after them. */
function dueTimes(s: PersistedSchedule, now: number): { due: number[]; after: number | undefined } {
  if (s.next === undefined) return { due: [], after: undefined };
  const times = fireTimesOfSchedule(s);
  const due: number[] = [];
  let at: number | undefined = s.next;
  while (at !== undefined && at <= now && due.length < MAX_DUE) {
    due.push(at);
    at = times.after(at);
  }
  return { due, after: at };
}

/** The key a fire's invocation targets: the object key, or the workflow id template filled for it. */
function keyOf(s: PersistedSchedule, at: number, handler: EffectiveHandler): string | undefined {
  if (handler.service.ty === 'Service') return undefined;
  const template = s.target.key ?? (handler.service.ty === 'Workflow' ? DEFAULT_WORKFLOW_KEY : undefined);
  return template === undefined ? undefined : fillKey(template, s.id, at);
}

function recordRun(s: PersistedSchedule, run: ScheduleRun): PersistedSchedule {
  s.recent = [...s.recent, run].slice(-RECENT_RUNS);
  if (run.invocationId !== undefined) {
    s.lastInvocationId = run.invocationId;
    s.lastFireAt = run.at;
    s.fires += 1;
  }
  return s;
}
