/**
 * `sys_journal` rows of one invocation (reference-behavior.md §3.6, sql-journal-samples.txt):
 * `entry_type` is `Command: Run` / `Notification: Run`, `raw` the entry's protobuf bytes,
 * `version` 2 (protocol v4+ journals), and the two JSON renderings follow the reference's
 * shapes, e.g. `{"Command":{"Run":{"completion_id":1,"name":"step-a"}}}` and
 * `{"Notification":{"ty":{"Completion":"Run"},"id":{"CompletionId":1},"result":"Success"}}`.
 * We keep no per-entry timestamp, so `appended_at` and `completed` stay NULL.
 */
import { codecFor, isCommand, isNotification, MessageType, messageName, type Notification } from '../protocol/messages.js';
import type { JournalEntry } from '../store/types.js';
import type { Row } from './result.js';

type Json = Record<string, unknown>;

/** `RunCommand` → `Run`, `RunCompletionNotification` → `Run`, `SignalNotification` → `Signal`. */
export function entryKind(type: number): string {
  return messageName(type).replace(/(CompletionNotification|Notification|Command)$/, '');
}

export function entryTypeName(type: number): string {
  if (isCommand(type)) return `Command: ${entryKind(type)}`;
  if (isNotification(type)) return `Notification: ${entryKind(type)}`;
  return messageName(type);
}

const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const bytes = (v: Uint8Array): number[] => Array.from(v);
const utf8 = new TextDecoder();

/** A decoded message as serde would print Restate's entry: snake_case, bytes as number arrays. */
function plain(value: unknown): unknown {
  if (value instanceof Uint8Array) return bytes(value);
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(value as Json)) if (v !== undefined) out[k === 'resultCompletionId' ? 'completion_id' : snake(k)] = plain(v);
    return out;
  }
  return value;
}

/** The result part of a completion or of a command that carries one. */
function result(m: Json): { full?: unknown; lite?: string } {
  if (m.value instanceof Uint8Array) return { full: { Success: bytes(m.value) }, lite: 'Success' };
  if (m.failure !== undefined) return { full: { Failure: plain(m.failure) }, lite: 'Failure' };
  if (m.void === true) return { full: 'Void', lite: 'Void' };
  if (typeof m.invocationId === 'string') return { full: { InvocationId: m.invocationId }, lite: 'InvocationId' };
  if (Array.isArray(m.stateKeys)) return { full: { StateKeys: (m.stateKeys as Uint8Array[]).map(bytes) }, lite: 'StateKeys' };
  return {};
}

/** Commands whose `value`/`failure` is an outcome (others, like SetState, carry a plain value). */
const RESULT_COMMANDS = new Set(['Output', 'GetEagerState', 'CompleteAwakeable', 'SendSignal']);

function commandJson(kind: string, m: Json): { full: Json; lite: Json } {
  const withResult = RESULT_COMMANDS.has(kind);
  const { name, headers, ...fields } = m;
  const { value: _value, failure: _failure, void: _void, ...others } = fields;
  const rest = withResult ? others : fields;
  const r = withResult ? result(m) : {};
  const full: Json = {};
  if (kind === 'Input') {
    full.headers = ((headers as Array<{ key: string; value: string }>) ?? []).map((h) => ({ name: h.key, value: h.value }));
    full.payload = m.value instanceof Uint8Array ? bytes(m.value) : [];
  } else {
    Object.assign(full, plain(rest));
    if (headers !== undefined) full.headers = plain(headers);
    if (r.full !== undefined) full.result = r.full;
  }
  if (typeof name === 'string') full.name = name;
  // The lite form names what the entry is about, without payloads.
  const lite: Json = {};
  if (kind !== 'Input') {
    for (const [k, v] of Object.entries(rest)) {
      if (v instanceof Uint8Array && k !== 'key') continue;
      if (k === 'parameter' || k === 'stateMap') continue;
      lite[k === 'resultCompletionId' ? 'completion_id' : snake(k)] = v instanceof Uint8Array ? utf8.decode(v) : plain(v);
    }
    if (r.lite !== undefined) lite.result = r.lite;
    if (typeof name === 'string' && name !== '') lite.name = name;
  }
  return { full: { Command: { [kind]: full } }, lite: { Command: { [kind]: lite } } };
}

function notificationJson(kind: string, n: Notification): { full: Json; lite: Json } {
  const r = result(n as unknown as Json);
  const id =
    n.completionId !== undefined ? { CompletionId: n.completionId } : n.signalId !== undefined ? { SignalIndex: n.signalId } : { SignalName: n.signalName ?? '' };
  if (kind === 'Signal') {
    return {
      full: { Notification: { Signal: { id, ...(r.full !== undefined ? { result: r.full } : {}) } } },
      lite: { Notification: { ty: 'Signal', id, ...(r.lite !== undefined ? { result: r.lite } : {}) } },
    };
  }
  const body = { completion_id: n.completionId, ...(r.full !== undefined ? { result: r.full } : {}) };
  return {
    full: { Notification: { Completion: { [kind]: body } } },
    lite: { Notification: { ty: { Completion: kind }, id, ...(r.lite !== undefined ? { result: r.lite } : {}) } },
  };
}

/** Callee ids by the completion id of their `CallInvocationIdCompletionNotification`. */
function calleeIds(decoded: Array<Json | undefined>, entries: JournalEntry[]): Map<number, string> {
  const out = new Map<number, string>();
  entries.forEach((e, i) => {
    const n = decoded[i];
    if (e.type === MessageType.CallInvocationIdCompletionNotification && n && typeof n.completionId === 'number' && typeof n.invocationId === 'string') {
      out.set(n.completionId, n.invocationId);
    }
  });
  return out;
}

export function journalRows(partitionKey: bigint, id: string, entries: JournalEntry[]): Row[] {
  const decoded = entries.map((e) => {
    try {
      return codecFor(e.type)?.decode(e.payload) as Json | undefined;
    } catch {
      return undefined;
    }
  });
  const callees = calleeIds(decoded, entries);
  return entries.map((e, index) => {
    const m = decoded[index];
    const kind = entryKind(e.type);
    const row: Row = {
      partition_key: partitionKey,
      id,
      index,
      entry_type: entryTypeName(e.type),
      raw: e.payload,
      raw_length: e.payload.length,
      version: 2,
    };
    if (!m) return row;
    const command = isCommand(e.type);
    // SendSignal's `name` is the signal's; its entry name is `entryName` (messages.ts).
    if (command) row.name = String((e.type === MessageType.SendSignalCommand ? m.entryName : m.name) ?? '');
    if (e.type === MessageType.CallCommand || e.type === MessageType.OneWayCallCommand) {
      const key = typeof m.key === 'string' && m.key !== '' ? `${m.key}/` : '';
      row.invoked_target = `${String(m.serviceName)}/${key}${String(m.handlerName)}`;
      const callee = callees.get(Number(m.invocationIdNotificationIdx));
      if (callee !== undefined) row.invoked_id = callee;
    }
    if (e.type === MessageType.SleepCommand) row.sleep_wakeup_at = Number(m.wakeUpTime);
    if (e.type === MessageType.GetPromiseCommand || e.type === MessageType.PeekPromiseCommand || e.type === MessageType.CompletePromiseCommand) {
      row.promise_name = m.key;
    }
    const json = command ? commandJson(kind, m) : isNotification(e.type) ? notificationJson(kind, m as Notification) : undefined;
    if (json) {
      row.entry_json = JSON.stringify(json.full);
      row.entry_lite_json = JSON.stringify(json.lite);
    }
    return row;
  });
}
