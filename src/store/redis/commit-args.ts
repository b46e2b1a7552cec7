/**
 * Builds KEYS and ARGV of `lua/commit-transition.lua` from a transition. The order of sections
 * and of items within them is the contract documented in the script's header.
 */
import { encodeEntry, encodeJson } from '../codec.js';
import { HISTORY_LIMIT, type Transition } from '../types.js';
import { partitionKeys } from './keys.js';

export type ScriptArg = string | Buffer;

export interface CommitArgs {
  keys: string[];
  args: ScriptArg[];
}

/** `epoch`: the fencing epoch this node holds for the partition; undefined commits unfenced (a store no node shares yet). */
export function commitArgs(t: Transition, epoch?: number): CommitArgs {
  const k = partitionKeys(t.partition);
  const deletes = t.deleteInvocations ?? [];
  const journal = t.journal ?? [];
  const invocations = t.invocations ?? [];
  const state = t.state ?? [];
  const timersRemove = t.timersRemove ?? [];
  const timersAdd = t.timersAdd ?? [];
  const outboxRemove = t.outboxRemove ?? [];
  const outboxAdd = t.outboxAdd ?? [];
  const records = t.records ?? [];
  const expectations = records.filter((r) => r.expect !== undefined);
  const history = t.history ?? [];

  const keys: string[] = [k.invocations, k.active, k.timers, k.outbox, k.epoch];
  const args: ScriptArg[] = [
    deletes,
    journal,
    invocations,
    state,
    timersRemove,
    timersAdd,
    outboxRemove,
    outboxAdd,
    records,
    expectations,
    history,
  ].map((section) => String(section.length));
  args.push(String(HISTORY_LIMIT), epoch === undefined ? '' : String(epoch));

  for (const id of deletes) {
    keys.push(k.snapshot(id), k.journal(id), k.history(id));
    args.push(id);
  }
  for (const append of journal) {
    keys.push(k.journal(append.id));
    args.push(String(append.at), String(append.entries.length));
    for (const entry of append.entries) args.push(encodeEntry(entry));
  }
  for (const rec of expectations) {
    keys.push(k.records(rec.kind));
    if (rec.expect === null) args.push(rec.key, 'a');
    else args.push(rec.key, 'v', encodeJson(rec.expect, `expected record ${rec.kind}/${rec.key}`));
  }
  for (const inv of invocations) {
    keys.push(k.snapshot(inv.id));
    args.push(inv.id, encodeJson(inv.snapshot, `snapshot of ${inv.id}`), inv.active ? '1' : '0');
  }
  for (const group of state) {
    keys.push(k.state(group.service, group.key));
    args.push(String(group.ops.length));
    for (const op of group.ops) {
      if (op.op === 'set') args.push('s', op.key, toBuffer(op.value));
      else if (op.op === 'clear') args.push('c', op.key);
      else args.push('a');
    }
  }
  args.push(...timersRemove.map((timer) => timer.key));
  for (const timer of timersAdd) args.push(String(timer.dueAt), timer.key);
  args.push(...outboxRemove);
  for (const msg of outboxAdd) args.push(msg.id, encodeJson(msg.body, `outbox message ${msg.id}`));
  for (const rec of records) {
    keys.push(k.records(rec.kind));
    if (rec.value === null || rec.value === undefined) args.push('d', rec.key);
    else args.push('s', rec.key, encodeJson(rec.value, `record ${rec.kind}/${rec.key}`));
  }
  for (const h of history) {
    keys.push(k.history(h.id));
    args.push(String(h.entries.length), ...h.entries.map((e) => encodeJson(e, `history entry of ${h.id}`)));
  }
  return { keys, args };
}

/** ioredis sends a Buffer as raw bytes; other Uint8Arrays would be stringified. */
function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
