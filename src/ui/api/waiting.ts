/**
 * What is waiting on what, across all invocations not completed: their open journal commands
 * (a sleep until its wake-up time, a call for its callee, a durable promise, a `ctx.run` in
 * progress, an attach), the awakeables a suspended one waits for, and the invocation-level
 * waits (a retry or a scheduled start at a time, a key's lock held by another, an operator's
 * resume). From sys_invocation, sys_journal (read by id) and sys_keyed_service_status.
 */
import { itemOf, type JournalItem } from './journal';
import { toMs } from '../format';
import { query, sqlList } from './query';

export type WaitKind =
  | 'timer'
  | 'call'
  | 'promise'
  | 'awakeable'
  | 'run'
  | 'attach'
  | 'retry'
  | 'start'
  | 'lock'
  | 'slot'
  | 'resume'
  | 'other';

export interface Wait {
  /** The invocation that waits. */
  id: string;
  target: string;
  status: string;
  kind: WaitKind;
  /** What it waits for, in words. */
  what: string;
  /** Where that is, when it has a page (a callee, a key, a lock holder). */
  link?: { href: string; text: string };
  since?: number;
  until?: number;
}

interface OpenRow {
  id: string;
  target: string;
  target_service_name: string;
  target_service_key?: string;
  status: string;
  modified_at?: string;
  scheduled_start_at?: string;
  next_retry_at?: string;
  suspended_waiting_for_signals?: number[];
}

/** Journals are read by id, this many per query (the engine reads just those). */
const CHUNK = 100;
const WITH_JOURNAL = new Set(['running', 'suspended', 'paused', 'backing-off']);

const invocationLink = (id: string) => ({ href: `/ui/invocations/${id}`, text: id });
const keyLink = (service: string, key: string) => ({
  href: `/ui/objects/${encodeURIComponent(service)}/${encodeURIComponent(key)}`,
  text: `${service}/${key}`,
});

async function journals(ids: string[]): Promise<Map<string, JournalItem[]>> {
  const out = new Map<string, JournalItem[]>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const rows = await query<{
      id: string;
      index: number;
      entry_type: string;
      name?: string;
      entry_json?: string;
      appended_at?: string;
      sleep_wakeup_at?: string;
      promise_name?: string;
    }>(
      `SELECT id, index, entry_type, name, entry_json, appended_at, sleep_wakeup_at, promise_name FROM sys_journal WHERE id IN ${sqlList(ids.slice(i, i + CHUNK))} ORDER BY id, index`,
    );
    for (const r of rows) out.set(r.id, [...(out.get(r.id) ?? []), itemOf(r)]);
  }
  return out;
}

/** The commands of a journal still waiting for their result, as waits. */
function openCommands(inv: OpenRow, items: JournalItem[]): Wait[] {
  const completed = new Set(items.flatMap((i) => (i.completes !== undefined ? [i.completes] : [])));
  const base = { id: inv.id, target: inv.target, status: inv.status };
  const waits: Wait[] = [];
  for (const c of items) {
    if (c.category !== 'command' || c.awaits.length === 0 || completed.has(c.awaits[0]!)) continue;
    const since = c.appendedAt;
    const at = { ...base, ...(since !== undefined ? { since } : {}) };
    if (c.kind === 'Sleep')
      waits.push({
        ...at,
        kind: 'timer',
        what: `a durable sleep${c.name ? ` “${c.name}”` : ''}`,
        ...(c.sleepUntil !== undefined ? { until: c.sleepUntil } : {}),
      });
    else if (c.kind === 'Call' && c.callee)
      waits.push({
        ...at,
        kind: 'call',
        what: `the result of ${c.callee.target}`,
        ...(c.callee.id ? { link: invocationLink(c.callee.id) } : {}),
      });
    else if (c.kind === 'GetPromise' || c.kind === 'PeekPromise') {
      waits.push({
        ...at,
        kind: 'promise',
        what: `durable promise “${c.promiseName ?? c.name ?? '?'}”`,
        ...(inv.target_service_key !== undefined
          ? { link: keyLink(inv.target_service_name, inv.target_service_key) }
          : {}),
      });
    } else if (c.kind === 'Run') waits.push({ ...at, kind: 'run', what: `ctx.run “${c.name ?? ''}” to finish` });
    else if ((c.kind === 'AttachInvocation' || c.kind === 'GetInvocationOutput') && c.about)
      waits.push({ ...at, kind: 'attach', what: 'the result of another invocation', link: invocationLink(c.about) });
    else if (c.kind !== 'OneWayCall')
      waits.push({ ...at, kind: 'other', what: `${c.kind}${c.name ? ` “${c.name}”` : ''}` });
  }
  return waits;
}

export async function loadWaits(): Promise<Wait[]> {
  const open = await query<OpenRow>(
    `SELECT id, target, target_service_name, target_service_key, status, modified_at, scheduled_start_at, next_retry_at, suspended_waiting_for_signals FROM sys_invocation WHERE status <> 'completed'`,
  );
  const [byId, holders] = await Promise.all([
    journals(open.filter((r) => WITH_JOURNAL.has(r.status)).map((r) => r.id)),
    query<{ service_name: string; service_key: string; invocation_id: string }>(
      'SELECT service_name, service_key, invocation_id FROM sys_keyed_service_status',
    ),
  ]);
  const holderOf = new Map(holders.map((h) => [`${h.service_name}/${h.service_key}`, h.invocation_id]));
  const waits: Wait[] = [];
  for (const inv of open) {
    const base = { id: inv.id, target: inv.target, status: inv.status };
    const since = toMs(inv.modified_at);
    const from = since !== undefined ? { since } : {};
    waits.push(...openCommands(inv, byId.get(inv.id) ?? []));
    for (const signal of inv.suspended_waiting_for_signals ?? []) {
      // Signal 1 is the cancel signal, which every invocation listens for; from 17 on they are awakeables.
      if (signal >= 17)
        waits.push({ ...base, ...from, kind: 'awakeable', what: `an awakeable (signal ${signal}) to be resolved` });
    }
    const retry = toMs(inv.next_retry_at);
    const start = toMs(inv.scheduled_start_at);
    if (inv.status === 'backing-off')
      waits.push({
        ...base,
        ...from,
        kind: 'retry',
        what: 'its next attempt',
        ...(retry !== undefined ? { until: retry } : {}),
      });
    if (inv.status === 'scheduled')
      waits.push({
        ...base,
        ...from,
        kind: 'start',
        what: 'its scheduled start',
        ...(start !== undefined ? { until: start } : {}),
      });
    if (inv.status === 'paused') waits.push({ ...base, ...from, kind: 'resume', what: 'an operator to resume it' });
    if (inv.status === 'pending') {
      const holder =
        inv.target_service_key !== undefined
          ? holderOf.get(`${inv.target_service_name}/${inv.target_service_key}`)
          : undefined;
      if (holder && holder !== inv.id)
        waits.push({
          ...base,
          ...from,
          kind: 'lock',
          what: `the lock of ${inv.target_service_name}/${inv.target_service_key}, held by`,
          link: invocationLink(holder),
        });
      else waits.push({ ...base, ...from, kind: 'slot', what: 'a concurrency slot or its key’s lock' });
    }
  }
  return waits.sort((a, b) => (a.until ?? Infinity) - (b.until ?? Infinity) || (a.since ?? 0) - (b.since ?? 0));
}
