/**
 * Journal rows (sys_journal) as the pages show them: what each entry is, when it was
 * appended, which completions it waits for or brings, whom it calls, and its values decoded.
 * The entry JSON follows the reference's shapes (src/query/journal-rows.ts), with payloads as
 * arrays of byte numbers; a call names its callee (target and id) inside its `request`, which
 * is where this reads them (the `invoked_*` columns stay empty for v2 journals, as Restate's).
 */
import { query, sqlString } from './query';
import { decodeBytes, toMs } from '../format';

interface JournalRow {
  index: number;
  entry_type: string;
  name?: string;
  entry_json?: string;
  appended_at?: string;
  sleep_wakeup_at?: string;
  promise_name?: string;
}

export interface JournalValue {
  label: string;
  kind: 'json' | 'text' | 'binary' | 'failure';
  text: string;
}

export interface Callee {
  target: string;
  /** Known once the callee's id notification is in the journal (or the command carries it). */
  id?: string;
  /** A one-way send, or a call whose result is awaited. */
  oneWay: boolean;
}

export interface JournalItem {
  index: number;
  category: 'command' | 'notification' | 'other';
  kind: string;
  name?: string;
  appendedAt?: number;
  callee?: Callee;
  /** The invocation a SendSignal, Attach or GetInvocationOutput is about. */
  about?: string;
  sleepUntil?: number;
  promiseName?: string;
  /** Completions a command waits for (its result's id first). */
  awaits: number[];
  /** The completion a notification brings. */
  completes?: number;
  /** The signal a signal notification brings (an awakeable's, from index 17 on; 1 is CANCEL). */
  signal?: number | string;
  headers?: Array<{ name: string; value: string }>;
  values: JournalValue[];
  /** The entry's JSON as the server gave it, for the export. */
  json?: unknown;
}

type Json = Record<string, unknown>;

const isBytes = (v: unknown): v is number[] => Array.isArray(v) && v.every((b) => typeof b === 'number');
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const utf8 = new TextDecoder();

/** Parts of an entry that are not values a person reads: trace ids, headers, retention settings. */
const NOT_VALUES = new Set([
  'headers',
  'span_context',
  'invocation_target',
  'completion_retention_duration',
  'journal_retention_duration',
  'key',
]);

/** What a person calls the value at `key` of an entry of `kind`. */
function labelOf(kind: string, key: string): string {
  if (key === 'payload' || key === 'parameter') return 'input';
  if (key === 'Success') return kind === 'Output' ? 'output' : 'result';
  return key;
}

/** The byte payloads and failures inside an entry's JSON. */
function valuesOf(kind: string, node: unknown): JournalValue[] {
  if (!isObject(node)) return [];
  const out: JournalValue[] = [];
  for (const [k, v] of Object.entries(node)) {
    if (NOT_VALUES.has(k)) continue;
    if (isBytes(v)) {
      if (v.length > 0) out.push({ label: labelOf(kind, k), ...decodeBytes(v) });
    } else if (k === 'Failure' && isObject(v)) {
      out.push({ label: 'failure', kind: 'failure', text: `[${String(v.code ?? '?')}] ${String(v.message ?? '')}` });
    } else {
      out.push(...valuesOf(kind, v));
    }
  }
  return out;
}

/** `{"VirtualObject":{"name":"Tally","key":"k","handler":"add"}}` → `Tally/k/add`. */
function targetOf(t: unknown): string {
  const body = isObject(t) ? Object.values(t)[0] : undefined;
  if (!isObject(body)) return '?';
  return [body.name, body.key, body.handler].filter((p) => typeof p === 'string').join('/');
}

const STATE_COMMANDS = new Set(['GetLazyState', 'GetEagerState', 'SetState', 'ClearState']);
const ids = (...vs: unknown[]) => vs.filter((v): v is number => typeof v === 'number' && v > 0);

function commandItem(base: JournalItem, body: Json): JournalItem {
  const item = {
    ...base,
    awaits: ids(body.completion_id, body.result_completion_id, body.invocation_id_completion_id),
  };
  if (base.kind === 'Call' || base.kind === 'OneWayCall') {
    const request = isObject(body.request) ? body.request : {};
    const id = typeof request.invocation_id === 'string' ? request.invocation_id : undefined;
    item.callee = {
      target: targetOf(request.invocation_target),
      ...(id ? { id } : {}),
      oneWay: base.kind === 'OneWayCall',
    };
    item.values = valuesOf(base.kind, { parameter: request.parameter });
    if (Array.isArray(request.headers) && request.headers.length > 0)
      item.headers = request.headers as JournalItem['headers'];
  }
  if (base.kind === 'Input' && Array.isArray(body.headers)) item.headers = body.headers as JournalItem['headers'];
  if (STATE_COMMANDS.has(base.kind) && isBytes(body.key)) item.name = utf8.decode(Uint8Array.from(body.key));
  const about = body.target_invocation_id ?? body.invocation_id;
  if (typeof about === 'string') item.about = about;
  return item;
}

function notificationItem(base: JournalItem, body: Json): JournalItem {
  if (isObject(body.Signal)) {
    const id = isObject(body.Signal.id) ? body.Signal.id : {};
    const signal = typeof id.Index === 'number' ? id.Index : typeof id.Name === 'string' ? id.Name : undefined;
    return { ...base, ...(signal !== undefined ? { signal } : {}) };
  }
  const completion = isObject(body.Completion) ? Object.values(body.Completion)[0] : undefined;
  if (!isObject(completion)) return base;
  return {
    ...base,
    ...(typeof completion.completion_id === 'number' ? { completes: completion.completion_id } : {}),
    ...(typeof completion.invocation_id === 'string' ? { about: completion.invocation_id } : {}),
  };
}

export function itemOf(r: JournalRow): JournalItem {
  const [prefix, kind = r.entry_type] = r.entry_type.split(': ');
  let json: Json | undefined;
  try {
    json = r.entry_json ? (JSON.parse(r.entry_json) as Json) : undefined;
  } catch {
    json = undefined;
  }
  const category = prefix === 'Command' ? 'command' : prefix === 'Notification' ? 'notification' : 'other';
  const appendedAt = toMs(r.appended_at);
  const sleepUntil = toMs(r.sleep_wakeup_at);
  const base: JournalItem = {
    index: Number(r.index),
    category,
    kind,
    ...(r.name ? { name: r.name } : {}),
    ...(appendedAt !== undefined ? { appendedAt } : {}),
    ...(sleepUntil !== undefined ? { sleepUntil } : {}),
    ...(r.promise_name ? { promiseName: r.promise_name } : {}),
    awaits: [],
    values: valuesOf(kind, json),
    ...(json ? { json } : {}),
  };
  const outer = json ? Object.values(json)[0] : undefined;
  if (category === 'command' && isObject(outer)) {
    const body = Object.values(outer)[0];
    return commandItem(base, isObject(body) ? body : {});
  }
  if (category === 'notification' && isObject(outer)) return notificationItem(base, outer);
  return base;
}

/**
 * The callees' ids come with their `CallInvocationId` notification, after the command: each
 * call learns its callee's id from there when its request does not carry it.
 */
function linkCallees(items: JournalItem[]): JournalItem[] {
  const calleeOf = new Map<number, string>();
  for (const i of items)
    if (i.kind === 'CallInvocationId' && i.completes !== undefined && i.about) calleeOf.set(i.completes, i.about);
  return items.map((i) => {
    if (!i.callee || i.callee.id) return i;
    const id = i.awaits.map((c) => calleeOf.get(c)).find((x) => x !== undefined);
    return id ? { ...i, callee: { ...i.callee, id } } : i;
  });
}

export async function loadJournal(id: string): Promise<JournalItem[]> {
  const rows = await query<JournalRow>(
    `SELECT index, entry_type, name, entry_json, appended_at, sleep_wakeup_at, promise_name FROM sys_journal WHERE id = ${sqlString(id)} ORDER BY index`,
  );
  return linkCallees(rows.map(itemOf));
}
