/**
 * Journal rows (sys_journal) as the timeline shows them: what each entry is, and its values
 * decoded. The entry JSON follows the reference's shapes (src/query/journal-rows.ts), with
 * payloads as arrays of byte numbers.
 */
import { query, sqlString } from '../api/query';
import { decodeBytes, toMs } from '../format';

interface JournalRow {
  index: number;
  entry_type: string;
  name?: string;
  entry_json?: string;
  invoked_id?: string;
  invoked_target?: string;
  sleep_wakeup_at?: string;
  promise_name?: string;
}

export interface JournalValue {
  label: string;
  kind: 'json' | 'text' | 'binary' | 'failure';
  text: string;
}

export interface JournalItem {
  index: number;
  category: 'command' | 'notification' | 'other';
  kind: string;
  name?: string;
  invokedId?: string;
  invokedTarget?: string;
  sleepUntil?: number;
  promiseName?: string;
  /** Completion id this entry creates or completes, to pair commands with notifications. */
  completionId?: number;
  values: JournalValue[];
}

const isBytes = (v: unknown): v is number[] => Array.isArray(v) && v.every((b) => typeof b === 'number');

/** What a person calls the value at `key` of an entry of `kind`. */
function labelOf(kind: string, key: string): string {
  if (key === 'payload') return 'input';
  if (key === 'Success') return kind === 'Output' ? 'output' : 'result';
  return key;
}

/** The byte payloads and failures inside an entry's JSON. */
function valuesOf(kind: string, node: unknown): JournalValue[] {
  if (node === null || typeof node !== 'object') return [];
  const out: JournalValue[] = [];
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === 'headers') continue;
    if (isBytes(v) && v.length > 0) {
      out.push({ label: labelOf(kind, k), ...decodeBytes(v) });
    } else if (k === 'Failure' && v && typeof v === 'object') {
      const f = v as { code?: number; message?: string };
      out.push({ label: 'failure', kind: 'failure', text: `[${f.code ?? '?'}] ${f.message ?? ''}` });
    } else {
      out.push(...valuesOf(kind, v));
    }
  }
  return out;
}

function itemOf(r: JournalRow): JournalItem {
  const [prefix, kind = r.entry_type] = r.entry_type.split(': ');
  let json: Record<string, unknown> | undefined;
  try {
    json = r.entry_json ? (JSON.parse(r.entry_json) as Record<string, unknown>) : undefined;
  } catch {
    json = undefined;
  }
  const body = json ? Object.values(json)[0] : undefined;
  const inner = body && typeof body === 'object' ? Object.values(body as Record<string, unknown>)[0] : undefined;
  const completionId = inner && typeof inner === 'object' ? (inner as { completion_id?: unknown; result_completion_id?: unknown }).completion_id : undefined;
  const sleepUntil = toMs(r.sleep_wakeup_at);
  return {
    index: Number(r.index),
    category: prefix === 'Command' ? 'command' : prefix === 'Notification' ? 'notification' : 'other',
    kind,
    ...(r.name ? { name: r.name } : {}),
    ...(r.invoked_id ? { invokedId: r.invoked_id } : {}),
    ...(r.invoked_target ? { invokedTarget: r.invoked_target } : {}),
    ...(sleepUntil !== undefined ? { sleepUntil } : {}),
    ...(r.promise_name ? { promiseName: r.promise_name } : {}),
    ...(typeof completionId === 'number' ? { completionId } : {}),
    values: valuesOf(kind, json),
  };
}

export async function loadJournal(id: string): Promise<JournalItem[]> {
  const rows = await query<JournalRow>(
    `SELECT index, entry_type, name, entry_json, invoked_id, invoked_target, sleep_wakeup_at, promise_name FROM sys_journal WHERE id = ${sqlString(id)} ORDER BY index`,
  );
  return rows.map(itemOf);
}
