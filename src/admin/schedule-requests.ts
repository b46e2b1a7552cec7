/**
 * Decoding of the schedule bodies of `/schedules` (issue 26) with serde's wording, as
 * extras-requests.ts does: 422 for a body that does not fit, 400 (`InvalidRequest`) for a
 * schedule that cannot be (a bad cron expression, time zone or interval, an unknown target).
 */
import { InvalidRequest } from '../errors.js';
import type { JsonDocument, JsonNode } from '../http/serde-json.js';
import { DurationParseError, parseDuration } from '../registry/durations.js';
import type { Registry } from '../registry/registry.js';
import { fireTimesOf, ScheduleSpecError, type ScheduleSpec } from '../registry/schedule-spec.js';
import type { CatchUpPolicy, OverlapPolicy, ScheduleTarget } from '../model/schedules.js';
import type { ScheduleAction, ScheduleDefinition } from '../runtime/runtime.js';
import { AdminError } from './errors.js';
import { Decoder, isNull } from './extras-requests.js';
import { randomBytes } from 'node:crypto';

const ID = /^[a-zA-Z0-9_.-]{1,64}$/;
const OVERLAP: OverlapPolicy[] = ['skip', 'buffer_one', 'allow_all'];
const CATCH_UP: CatchUpPolicy[] = ['one', 'all'];
const FIELDS = [
  'id',
  'target',
  'input',
  'cron',
  'timezone',
  'interval',
  'overlap',
  'catch_up',
  'catch_up_window',
  'paused',
];

/** Defaults: a fire while the previous run goes on is skipped; after downtime, one fire for the missed times of the last hour. */
export const SCHEDULE_DEFAULTS = {
  overlap: 'skip',
  catchUp: 'one',
  catchUpWindow: 3_600_000,
  timezone: 'UTC',
} as const;

/** A JSON value written back as text; numbers keep the digits they were sent with. */
function jsonText(node: JsonNode): string {
  switch (node.kind) {
    case 'null':
      return 'null';
    case 'bool':
      return String(node.value);
    case 'number':
      return node.text;
    case 'string':
      return JSON.stringify(node.value);
    case 'array':
      return `[${node.items.map(jsonText).join(',')}]`;
    case 'object':
      return `{${node.entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
  }
}

function oneOf<T extends string>(d: Decoder, node: JsonNode, path: string, allowed: readonly T[]): T {
  const value = d.string(node, path);
  if (!(allowed as readonly string[]).includes(value)) {
    throw d.fail(
      path,
      `unknown variant \`${value}\`, expected one of ${allowed.map((a) => `\`${a}\``).join(', ')}`,
      node.at,
    );
  }
  return value as T;
}

function duration(d: Decoder, node: JsonNode, path: string): number {
  try {
    return parseDuration(d.string(node, path));
  } catch (err) {
    if (err instanceof DurationParseError) throw d.fail(path, err.message, node.at);
    throw err;
  }
}

/** The timing of a body: exactly one of `cron` (with an optional `timezone`) and `interval`, checked. */
export function checkedSpec(spec: Partial<{ cron: string; timezone: string; interval: string }>): ScheduleSpec {
  if ((spec.cron === undefined) === (spec.interval === undefined))
    throw new InvalidRequest(
      'a schedule has either a cron expression (`cron`) or an interval (`interval`), one of them',
    );
  if (spec.interval !== undefined && spec.timezone !== undefined)
    throw new InvalidRequest('`timezone` goes with `cron`; an interval says its own offset');
  const checked: ScheduleSpec =
    spec.cron !== undefined
      ? { cron: spec.cron, timezone: spec.timezone ?? SCHEDULE_DEFAULTS.timezone }
      : { interval: spec.interval! };
  try {
    fireTimesOf(checked);
  } catch (err) {
    if (err instanceof ScheduleSpecError) throw new InvalidRequest(err.message);
    throw err;
  }
  return checked;
}

/** The target must exist; a key goes with objects and workflows (for a workflow it may use `{schedule_id}`, `{fire_time}`). */
function checkTarget(registry: Registry, target: ScheduleTarget): void {
  const service = registry.getService(target.service);
  if (!service)
    throw new InvalidRequest(
      `service '${target.service}' not found, make sure to register the service before scheduling it`,
    );
  if (!service.handlers.some((h) => h.name === target.handler))
    throw new InvalidRequest(`the service '${target.service}' has no handler '${target.handler}'`);
  if (service.ty === 'Service' && target.key !== undefined)
    throw new InvalidRequest(`'${target.service}' is a service: its target has no key`);
  if (service.ty === 'VirtualObject' && target.key === undefined)
    throw new InvalidRequest(`'${target.service}' is a virtual object: its target needs a key`);
}

function target(d: Decoder, node: JsonNode): ScheduleTarget {
  const obj = d.struct(node, 'target', 'ScheduleTarget', ['service', 'handler', 'key']);
  const out: ScheduleTarget = {
    service: d.string(d.required(obj, 'target', 'service'), 'target.service'),
    handler: d.string(d.required(obj, 'target', 'handler'), 'target.handler'),
  };
  const key = obj.get('key');
  if (!isNull(key)) out.key = d.string(key, 'target.key');
  return out;
}

interface Fields {
  id?: string;
  target?: ScheduleTarget;
  input?: string;
  cron?: string;
  timezone?: string;
  interval?: string;
  overlap?: OverlapPolicy;
  catchUp?: CatchUpPolicy;
  catchUpWindow?: number;
  paused?: boolean;
}

function fields(doc: JsonDocument, name: string): Fields {
  const d = new Decoder(doc);
  const obj = d.struct(doc.root, '', name, FIELDS);
  const out: Fields = {};
  const text = (f: 'id' | 'cron' | 'timezone' | 'interval') => {
    const n = obj.get(f);
    if (!isNull(n)) out[f] = d.string(n, f);
  };
  text('id');
  text('cron');
  text('timezone');
  text('interval');
  const t = obj.get('target');
  if (!isNull(t)) out.target = target(d, t);
  const input = obj.get('input');
  if (input !== undefined) out.input = jsonText(input);
  const overlap = obj.get('overlap');
  if (!isNull(overlap)) out.overlap = oneOf(d, overlap, 'overlap', OVERLAP);
  const catchUp = obj.get('catch_up');
  if (!isNull(catchUp)) out.catchUp = oneOf(d, catchUp, 'catch_up', CATCH_UP);
  const window = obj.get('catch_up_window');
  if (!isNull(window)) out.catchUpWindow = duration(d, window, 'catch_up_window');
  const paused = obj.get('paused');
  if (!isNull(paused)) out.paused = d.bool(paused, 'paused');
  return out;
}

/** `{schedule_id}` path parameter, and a body's `id`. */
export function scheduleId(value: string): string {
  if (!ID.test(value)) throw new AdminError(400, `bad schedule id '${value}': 1–64 characters of [a-zA-Z0-9_.-]`);
  return value;
}

/** `POST /schedules`. */
export function decodeCreateSchedule(
  doc: JsonDocument,
  registry: Registry,
): Extract<ScheduleAction, { type: 'create' }> {
  const f = fields(doc, 'CreateScheduleRequest');
  if (!f.target)
    throw new Decoder(doc).fail('', 'missing field `target`', doc.root.kind === 'object' ? doc.root.end : doc.root.at);
  checkTarget(registry, f.target);
  const spec = checkedSpec(f);
  const definition: ScheduleDefinition = {
    id: f.id !== undefined ? scheduleId(f.id) : `sch_${randomBytes(10).toString('hex')}`,
    target: f.target,
    ...(f.input !== undefined ? { input: f.input } : {}),
    ...spec,
    overlap: f.overlap ?? SCHEDULE_DEFAULTS.overlap,
    catchUp: f.catchUp ?? SCHEDULE_DEFAULTS.catchUp,
    catchUpWindow: f.catchUpWindow ?? SCHEDULE_DEFAULTS.catchUpWindow,
  };
  return { type: 'create', definition, paused: f.paused ?? false };
}

/** `PATCH /schedules/{id}`: what changes; a new timing replaces the old one whole. */
export function decodeUpdateSchedule(
  doc: JsonDocument,
  registry: Registry,
  id: string,
  current: ScheduleDefinition,
): Extract<ScheduleAction, { type: 'update' }> {
  const f = fields(doc, 'UpdateScheduleRequest');
  if (f.id !== undefined && f.id !== id) throw new InvalidRequest('the id of a schedule cannot change');
  if (f.paused !== undefined)
    throw new InvalidRequest('pause and resume a schedule with POST /schedules/{id}/pause and /resume');
  const patch: Extract<ScheduleAction, { type: 'update' }>['patch'] = {};
  if (f.target) {
    checkTarget(registry, f.target);
    patch.target = f.target;
  }
  if (f.input !== undefined) patch.input = f.input;
  if (f.cron !== undefined || f.interval !== undefined || f.timezone !== undefined) {
    const timing = f.cron !== undefined || f.interval !== undefined ? f : { cron: current.cron, timezone: f.timezone };
    const spec = checkedSpec(timing);
    Object.assign(patch, spec);
  }
  if (f.overlap !== undefined) patch.overlap = f.overlap;
  if (f.catchUp !== undefined) patch.catchUp = f.catchUp;
  if (f.catchUpWindow !== undefined) patch.catchUpWindow = f.catchUpWindow;
  return { type: 'update', id, patch };
}

/** `POST /schedules/preview`: the timing of a body, checked. */
export function decodePreview(doc: JsonDocument): ScheduleSpec {
  return checkedSpec(fields(doc, 'SchedulePreviewRequest'));
}
