/**
 * `sys_journal` rows of one invocation (reference-behavior.md §3.6, sql-journal-samples.txt):
 * `entry_type` is `Command: Run` / `Notification: Run`, `raw` the entry's protobuf bytes,
 * `version` 2 (protocol v4+ journals), and the two JSON renderings follow the reference's
 * shapes, e.g. `{"Command":{"Run":{"completion_id":1,"name":"step-a"}}}` and
 * `{"Notification":{"ty":{"Completion":"Run"},"id":{"CompletionId":1},"result":"Success"}}`.
 * `completed` stays NULL, and so do `invoked_id` / `invoked_target`, which Restate fills for
 * version-1 journals only: the CLI reads a call's target and callee from `entry_json` (§4).
 */
import {
  codecFor,
  isCommand,
  isNotification,
  MessageType,
  messageName,
  type Notification,
} from '../protocol/messages.js';
import type { JournalEntry } from '../store/types.js';
import type { Row } from './result.js';

/** What Restate's entry JSON says about a callee, from the registry: its kind and retentions (ms). */
export interface CalleeInfo {
  serviceTy: 'Service' | 'VirtualObject' | 'Workflow';
  handlerTy: 'Exclusive' | 'Shared' | 'Workflow' | undefined;
  completionRetention: number;
  journalRetention: number;
}

export type CalleeLookup = (service: string, handler: string, idempotent: boolean) => CalleeInfo | undefined;

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
    for (const [k, v] of Object.entries(value as Json))
      if (v !== undefined) out[k === 'resultCompletionId' ? 'completion_id' : snake(k)] = plain(v);
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
  if (Array.isArray(m.stateKeys))
    return { full: { StateKeys: (m.stateKeys as Uint8Array[]).map(bytes) }, lite: 'StateKeys' };
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
    full.headers = ((headers as Array<{ key: string; value: string }>) ?? []).map((h) => ({
      name: h.key,
      value: h.value,
    }));
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
      lite[k === 'resultCompletionId' ? 'completion_id' : snake(k)] =
        v instanceof Uint8Array ? utf8.decode(v) : plain(v);
    }
    if (r.lite !== undefined) lite.result = r.lite;
    if (typeof name === 'string' && name !== '') lite.name = name;
  }
  return { full: { Command: { [kind]: full } }, lite: { Command: { [kind]: lite } } };
}

function notificationJson(kind: string, n: Notification): { full: Json; lite: Json } {
  const r = result(n as unknown as Json);
  const id =
    n.completionId !== undefined
      ? { CompletionId: n.completionId }
      : n.signalId !== undefined
        ? { SignalIndex: n.signalId }
        : { SignalName: n.signalName ?? '' };
  if (kind === 'Signal') {
    const signalId = n.signalId !== undefined ? { Index: n.signalId } : { Name: n.signalName ?? '' };
    return {
      full: { Notification: { Signal: { id: signalId, ...(r.full !== undefined ? { result: r.full } : {}) } } },
      lite: { Notification: { ty: 'Signal', id, ...(r.lite !== undefined ? { result: r.lite } : {}) } },
    };
  }
  // A call's invocation id is a field of its own in Restate's form, not a result.
  const outcome =
    kind === 'CallInvocationId' ? { invocation_id: n.invocationId } : r.full !== undefined ? { result: r.full } : {};
  const body = { completion_id: n.completionId, ...outcome };
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
    if (
      e.type === MessageType.CallInvocationIdCompletionNotification &&
      n &&
      typeof n.completionId === 'number' &&
      typeof n.invocationId === 'string'
    ) {
      out.set(n.completionId, n.invocationId);
    }
  });
  return out;
}

const duration = (ms: number) => ({ secs: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 });
const NO_SPAN = {
  span_context: {
    trace_id: new Array(16).fill(0),
    span_id: new Array(8).fill(0),
    trace_flags: 0,
    is_remote: false,
    trace_state: '',
  },
  cause: null,
};

/** Restate's `invocation_target` of a call: `{"Service":{…}}`, `{"VirtualObject":{…}}` or `{"Workflow":{…}}`. */
function invocationTarget(m: Json, callee: CalleeInfo | undefined): Json {
  const name = String(m.serviceName);
  const handler = String(m.handlerName);
  const ty = callee?.serviceTy ?? (m.key === '' || m.key === undefined ? 'Service' : 'VirtualObject');
  if (ty === 'Service') return { Service: { name, handler, scope: null } };
  return {
    [ty]: { name, key: String(m.key ?? ''), handler, handler_ty: callee?.handlerTy ?? 'Exclusive', scope: null },
  };
}

/**
 * Restate's serde form of a Call / OneWayCall command (observed on 1.7.12): the request with the
 * callee's id and target, then the completion ids. The CLI prints `Call <target> <id>` from it.
 */
function callJson(e: JournalEntry, m: Json, calleeId: string | undefined, lookup: CalleeLookup): Json {
  const idempotencyKey = typeof m.idempotencyKey === 'string' ? m.idempotencyKey : null;
  const callee = lookup(String(m.serviceName), String(m.handlerName), idempotencyKey !== null);
  const request = {
    invocation_id: calleeId ?? null,
    invocation_target: invocationTarget(m, callee),
    span_context: NO_SPAN,
    parameter: m.parameter instanceof Uint8Array ? bytes(m.parameter) : [],
    headers: ((m.headers as Array<{ key: string; value: string }>) ?? []).map((h) => ({ name: h.key, value: h.value })),
    idempotency_key: idempotencyKey,
    completion_retention_duration: duration(callee?.completionRetention ?? 0),
    journal_retention_duration: duration(callee?.journalRetention ?? 0),
  };
  const name = String(m.name ?? '');
  if (e.type === MessageType.CallCommand) {
    return {
      Command: {
        Call: {
          request,
          invocation_id_completion_id: m.invocationIdNotificationIdx,
          result_completion_id: m.resultCompletionId,
          name,
        },
      },
    };
  }
  return {
    Command: {
      OneWayCall: {
        request,
        invoke_time: Number(m.invokeTime ?? 0),
        invocation_id_completion_id: m.invocationIdNotificationIdx,
        name,
      },
    },
  };
}

/** Restate's serde form of a SendSignal command: `signal_id` is `{"Index":1}` or `{"Name":"x"}`. */
function sendSignalJson(m: Json): Json {
  const r = result(m).full ?? 'Void';
  const signalId = typeof m.idx === 'number' ? { Index: m.idx } : { Name: String(m.name ?? '') };
  return {
    Command: {
      SendSignal: {
        target_invocation_id: m.targetInvocationId,
        signal_id: signalId,
        result: r,
        name: String(m.entryName ?? ''),
      },
    },
  };
}

export function journalRows(partitionKey: bigint, id: string, entries: JournalEntry[], lookup: CalleeLookup): Row[] {
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
      appended_at: e.appendedAt,
    };
    if (!m) return row;
    const command = isCommand(e.type);
    // SendSignal's `name` is the signal's; its entry name is `entryName` (messages.ts).
    if (command) row.name = String((e.type === MessageType.SendSignalCommand ? m.entryName : m.name) ?? '');
    if (e.type === MessageType.SleepCommand) row.sleep_wakeup_at = Number(m.wakeUpTime);
    if (
      e.type === MessageType.GetPromiseCommand ||
      e.type === MessageType.PeekPromiseCommand ||
      e.type === MessageType.CompletePromiseCommand
    ) {
      row.promise_name = m.key;
    }
    const json = command
      ? commandJson(kind, m)
      : isNotification(e.type)
        ? notificationJson(kind, m as Notification)
        : undefined;
    if (json) {
      row.entry_json = JSON.stringify(json.full);
      row.entry_lite_json = JSON.stringify(json.lite);
    }
    if (e.type === MessageType.CallCommand || e.type === MessageType.OneWayCallCommand) {
      row.entry_json = JSON.stringify(callJson(e, m, callees.get(Number(m.invocationIdNotificationIdx)), lookup));
    } else if (e.type === MessageType.SendSignalCommand) {
      row.entry_json = JSON.stringify(sendSignalJson(m));
    }
    return row;
  });
}
