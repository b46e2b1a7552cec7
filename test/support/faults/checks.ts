/**
 * What must hold after a round, given what the clients were told (`Sent`), what the service
 * recorded of each step's executions, and what the server shows once it has settled.
 *
 * A step may run again if its first result was never journaled (the attempt died before the
 * server stored it). It must not run again once a result was stored: the handler returns the
 * execution id of the result it used, so every execution of that step recorded after the used
 * one ran although a result existed. For the same reason an exclusive handler "holds" its key
 * from the execution of `enter` whose result it used until the one of `exit` it used: an
 * attempt cut by a kill may have entered before and never left, so only those two bound it.
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, jsonOf, type Answer } from './answer.js';
import { stepNames, type Execution } from './executions.js';
import type { Sent } from './load.js';
import { KEYS } from './plan.js';
import type { Observed } from './settle.js';

export type ViolationKind =
  'lost' | 'runTwice' | 'overlap' | 'wrongCount' | 'stuckKey' | 'unfinished' | 'ambiguous' | 'stalled' | 'error';

/** Up this long during a request's wait, the service must have answered it. */
const STALL_MS = 20_000;

export interface Violation {
  kind: ViolationKind;
  /** An operation, an invocation or a key. */
  subject: string;
  detail: string;
  /** The invocations involved: the server log excerpt is taken around them. */
  ids: string[];
}

interface Result {
  op: string;
  step?: string;
  enter?: string;
  exit?: string;
  before?: number;
  after?: number;
}

/** `outages`: from each kill until the process is back and answers again (ms since the epoch). */
export function check(
  sent: Sent[],
  executions: Execution[],
  observed: Observed,
  outages: Array<[number, number]> = [],
): Violation[] {
  const results = knownResults(observed);
  return [
    ...lost(sent, observed),
    ...ranTwice(executions, results),
    ...overlaps(executions, results),
    ...wrongCounts(sent, executions, results, observed),
    ...stuckKeys(executions, observed),
    ...unfinished(sent, observed),
    ...ambiguous(sent),
    ...stalled(sent, outages),
  ];
}

/**
 * Every request is answered while the service is up: one that got no answer within the
 * client's 30 s (not a reset by a killed server, not a 503) although the service was up for
 * STALL_MS of that time waited on something that never came. A long outage (a Sentinel
 * failover that Sentinel itself retries) may hold a call that long and is not counted.
 */
function stalled(sent: Sent[], outages: Array<[number, number]>): Violation[] {
  const byStart = [...outages].sort((x, y) => x[0] - y[0]);
  // Time in [from, to] inside some outage, overlapping outages counted once.
  const away = (from: number, to: number) => {
    let ms = 0;
    let covered = from;
    for (const [a, b] of byStart) {
      const start = Math.max(a, covered);
      const end = Math.min(b, to);
      if (end > start) {
        ms += end - start;
        covered = end;
      }
    }
    return ms;
  };
  return sent
    .filter((s) => !s.acked && s.error?.startsWith('ETIMEDOUT'))
    .map((s) => ({ s, awayMs: away(s.sentAt, s.answeredAt) }))
    .filter(({ s, awayMs }) => s.answeredAt - s.sentAt - awayMs >= STALL_MS)
    .map(({ s, awayMs }) => ({
      kind: 'stalled',
      subject: s.op.body.op,
      detail: `${s.op.kind} ${s.op.path}${s.op.key ? ` (key ${s.op.key})` : ''} had no answer within ${((s.answeredAt - s.sentAt) / 1000).toFixed(1)} s, ${(awayMs / 1000).toFixed(1)} s of them in an outage`,
      ids: [],
    }));
}

/** No answer leaves the client guessing: a 503 said that the outcome was not known (issue 31). */
function ambiguous(sent: Sent[]): Violation[] {
  return sent
    .filter((s) => s.ambiguous > 0)
    .map((s) => ({
      kind: 'ambiguous',
      subject: s.op.body.op,
      detail: `${s.op.kind} ${s.op.path} got ${s.ambiguous} answer(s) 503 whose outcome was not known`,
      ids: s.invocationId ? [s.invocationId] : [],
    }));
}

/** Every invocation that was created completes within the bound, acknowledged or not. */
function unfinished(sent: Sent[], observed: Observed): Violation[] {
  const acked = new Set(sent.flatMap((s) => (s.acked ? [s.invocationId!] : [])));
  return observed.unfinished.map((r) => ({
    kind: 'unfinished',
    subject: String(r.id),
    detail:
      `${String(r.target)}${acked.has(String(r.id)) ? ' (acknowledged)' : ''} still ${String(r.status)} ` +
      `(created ${String(r.created_at)}, last modified ${String(r.modified_at)})`,
    ids: [String(r.id)],
  }));
}

/** The result of every invocation that answered, the final calls included. */
function knownResults(observed: Observed): Map<string, Result> {
  const results = new Map<string, Result>();
  const add = (id: string | undefined, a: Answer) => {
    const r = jsonOf(a) as Result | undefined;
    if (id !== undefined && r !== undefined) results.set(id, r);
  };
  for (const [id, a] of observed.byId) add(id, a);
  for (const a of observed.finalCalls.values()) add('invocationId' in a ? a.invocationId : undefined, a);
  return results;
}

/**
 * An acknowledged invocation must complete with its operation's result, the one a call was
 * answered with. One that is still running or queued is reported as unfinished instead.
 */
function lost(sent: Sent[], observed: Observed): Violation[] {
  const out: Violation[] = [];
  const reported = new Set(observed.unfinished.map((r) => String(r.id)));
  for (const s of sent) {
    if (!s.acked || reported.has(s.invocationId!)) continue;
    const id = s.invocationId!;
    const attached = observed.byId.get(id)!;
    const r = jsonOf(attached) as Result | undefined;
    const what = `${s.op.kind} ${s.op.body.op}${s.op.key ? ` on ${s.op.key}` : ''}, acknowledged as ${id}`;
    let detail: string | undefined;
    if (r?.op !== s.op.body.op) detail = `${what}: attach answered ${describe(attached)}`;
    else if (s.result !== undefined && !isDeepStrictEqual(r, s.result))
      detail = `${what}: the call answered ${JSON.stringify(s.result)}, attach now ${JSON.stringify(r)}`;
    else if (s.op.idempotencyKey !== undefined) {
      const byKey = observed.byIdempotencyKey.get(s.op.idempotencyKey)!;
      if (!isDeepStrictEqual(jsonOf(byKey), r))
        detail = `${what}: attach by its idempotency key answered ${describe(byKey)}`;
    }
    if (detail === undefined) continue;
    reported.add(id);
    out.push({ kind: 'lost', subject: s.op.body.op, detail, ids: [id] });
  }
  return out;
}

function ranTwice(executions: Execution[], results: Map<string, Result>): Violation[] {
  const out: Violation[] = [];
  const runs = groupBy(executions, (e) => `${e.inv} ${e.name}`);
  for (const [id, result] of results) {
    for (const name of stepNames) {
      const used = result[name];
      if (used === undefined) continue;
      const list = runs.get(`${id} ${name}`) ?? [];
      const i = list.findIndex((e) => e.exec === used);
      if (i < 0) {
        out.push({
          kind: 'runTwice',
          subject: `${id} ${name}`,
          detail: `the journaled result of '${name}' (${used}) is no execution the service recorded`,
          ids: [id],
        });
        continue;
      }
      for (const again of list.slice(i + 1)) {
        out.push({
          kind: 'runTwice',
          subject: `${result.op} ${name}`,
          detail: `'${name}' of ${id} ran at ${iso(again.at)}, after the execution of ${iso(list[i]!.at)} whose result the invocation used`,
          ids: [id],
        });
      }
    }
  }
  // One operation sent once (or, with an idempotency key, several times) is one invocation.
  for (const [op, list] of groupBy(executions, (e) => e.op)) {
    const invocations = [...new Set(list.map((e) => e.inv))];
    if (invocations.length > 1) {
      out.push({
        kind: 'runTwice',
        subject: op,
        detail: `operation ${op} ran as ${invocations.length} invocations`,
        ids: invocations,
      });
    }
  }
  return out;
}

function overlaps(executions: Execution[], results: Map<string, Result>): Violation[] {
  const out: Violation[] = [];
  const byExec = new Map(executions.map((e) => [e.exec, e]));
  const byKey = groupBy(
    executions.filter((e) => e.key !== undefined),
    (e) => e.key!,
  );
  const reported = new Set<string>();
  for (const [holder, result] of results) {
    const enter = byExec.get(result.enter ?? '');
    const exit = byExec.get(result.exit ?? '');
    if (!enter || !exit) continue;
    for (const e of byKey.get(enter.key!) ?? []) {
      if (e.line <= enter.line || e.line >= exit.line || e.inv === holder) continue;
      const pair = [holder, e.inv].sort().join(' ');
      if (reported.has(pair)) continue;
      reported.add(pair);
      out.push({
        kind: 'overlap',
        subject: enter.key!,
        detail:
          `${e.inv} (${e.op}) ran '${e.name}' at ${iso(e.at)} while ${holder} (${result.op}) held key ${enter.key}: ` +
          `it entered at ${iso(enter.at)} and left at ${iso(exit.at)}`,
        ids: [holder, e.inv],
      });
    }
  }
  return out;
}

/**
 * A key's count is the sum of its acknowledged adds, plus some of those whose outcome is
 * unknown; exactly the sum of the adds that ran, when all of them answered; and no two adds
 * read the same count.
 */
function wrongCounts(
  sent: Sent[],
  executions: Execution[],
  results: Map<string, Result>,
  observed: Observed,
): Violation[] {
  const out: Violation[] = [];
  const keyOfExec = new Map(executions.map((e) => [e.exec, e.key]));
  for (const key of KEYS) {
    const adds = sent.filter((s) => s.op.key === key);
    const acked = sum(adds.filter((s) => s.acked).map((s) => s.op.body.delta!));
    const unknown = sum(adds.filter((s) => !s.acked).map((s) => s.op.body.delta!));
    const answer = observed.counts.get(key)!;
    const count = jsonOf(answer);
    const problems: string[] = [];
    if (typeof count !== 'number') problems.push(`its count could not be read: ${describe(answer)}`);
    else if (count < acked || count > acked + unknown) {
      problems.push(
        `count ${count}, but the acknowledged adds sum to ${acked} and the unacknowledged ones to ${unknown}`,
      );
    }
    // Every add that ran on the key is in the executions (it runs `enter` first); once all of
    // them have answered, the count is exactly what they added.
    const ran = [...new Set(executions.filter((e) => e.key === key).map((e) => e.inv))].map((id) => results.get(id));
    if (typeof count === 'number' && problems.length === 0 && ran.every((r) => r !== undefined)) {
      const added = sum(ran.map((r) => r!.after! - r!.before!));
      if (count !== added) problems.push(`count ${count}, but the ${ran.length} adds that ran added ${added}`);
    }
    const ids: string[] = [];
    const readers = groupBy(
      [...results].filter(([, r]) => r.enter !== undefined && keyOfExec.get(r.enter) === key && r.after !== r.before),
      ([, r]) => String(r.before),
    );
    for (const [before, same] of readers) {
      if (same.length < 2) continue;
      problems.push(`${same.map(([, r]) => r.op).join(', ')} all read ${before}: all but one update were lost`);
      ids.push(...same.map(([id]) => id));
    }
    if (problems.length > 0) out.push({ kind: 'wrongCount', subject: key, detail: problems.join('; '), ids });
  }
  return out;
}

/** Once everything has completed an exclusive call on each key gets through. */
function stuckKeys(executions: Execution[], observed: Observed): Violation[] {
  const out: Violation[] = [];
  for (const key of KEYS) {
    const final = observed.finalCalls.get(key)!;
    if (jsonOf(final) !== undefined) continue;
    const problems = [`an exclusive call got no answer: ${describe(final)}`];
    const ids: string[] = [];
    const queued = observed.inbox.filter((r) => r.service_key === key).map((r) => String(r.id));
    if (queued.length > 0) problems.push(`${queued.length} invocations queued behind the lock`);
    const lock = observed.locks.get(key);
    if (lock) {
      const statusOf = (id: string) => lock.status.get(id) ?? 'no such invocation';
      const inbox = [...groupBy(lock.inbox, statusOf)].map(
        ([status, list]) => `${list.length} ${status}${status === 'pending' ? '' : ` (${list.join(', ')})`}`,
      );
      const ran = executions.filter((e) => e.inv === lock.holder).map((e) => `${e.name} at ${iso(e.at)}`);
      problems.push(
        `its lock record names ${lock.holder ? `${lock.holder} as holder (${statusOf(lock.holder)}; ran ${ran.join(', ') || 'nothing'})` : 'no holder'}, ` +
          `and in its inbox ${inbox.join(', ') || 'nothing'}`,
      );
      if (lock.holder) ids.push(lock.holder);
    }
    out.push({ kind: 'stuckKey', subject: key, detail: problems.join('; '), ids: [...ids, ...queued.slice(0, 2)] });
  }
  return out;
}

export function groupBy<T>(items: T[], by: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = by(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
export const iso = (ms: number) => new Date(ms).toISOString();
