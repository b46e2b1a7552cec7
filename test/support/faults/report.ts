/** The campaign's output: a table per store and fault kind, and the evidence of each violation. */
import { groupBy, iso, type Violation, type ViolationKind } from './checks.js';
import type { Fault } from './injector.js';
import type { FaultKind } from './options.js';
import type { StoreKind } from '../stack.js';

export interface RoundResult {
  store: StoreKind;
  fault: FaultKind;
  round: number;
  seed: number;
  ops: number;
  acked: number;
  /** Why the others got no acknowledgement, by kind of answer (`ETIMEDOUT`, `500`, ...). */
  unacknowledged: Record<string, number>;
  /** 503s the retrying client got, and those that said the outcome was not known. */
  unavailable: number;
  ambiguous: number;
  /** Per fault, from the kill to the first answer to an operation sent after it. */
  resumeMs: number[];
  faults: Fault[];
  violations: Violation[];
  durationMs: number;
  /** Everything redstate printed during the round, restarts included. */
  serverLog: string;
  /** Where the round's server log and executions file were kept. */
  artifacts?: string;
}

const columns: Array<[ViolationKind, string]> = [
  ['lost', 'lost'],
  ['runTwice', 'run twice'],
  ['overlap', 'overlaps'],
  ['wrongCount', 'wrong counts'],
  ['stuckKey', 'stuck keys'],
  ['unfinished', 'unfinished'],
  ['ambiguous', 'ambiguous answers'],
  ['stalled', 'unanswered (stalled)'],
  ['error', 'errors'],
];

/** One row per store and fault kind; a violation count says in how many rounds it was seen. */
export function table(results: RoundResult[]): string {
  const head = [
    'store',
    'fault',
    'rounds',
    'failed rounds',
    'faults',
    'ops',
    'acknowledged',
    'unacknowledged',
    '503s (retried)',
    'resume s (max)',
    ...columns.map(([, title]) => title),
  ];
  const rows: string[][] = [];
  for (const group of groupBy(results, (r) => `${r.store} ${r.fault}`).values()) {
    const first = group[0]!;
    const total = (f: (r: RoundResult) => number) => String(group.reduce((n, r) => n + f(r), 0));
    rows.push([
      first.store,
      first.fault,
      String(group.length),
      total((r) => (r.violations.length > 0 ? 1 : 0)),
      total((r) => r.faults.length),
      total((r) => r.ops),
      total((r) => r.acked),
      total((r) => r.ops - r.acked),
      total((r) => r.unavailable),
      seconds(Math.max(...group.flatMap((r) => r.resumeMs.filter((ms) => !Number.isNaN(ms))))),
      ...columns.map(([kind]) => {
        const n = total((r) => r.violations.filter((v) => v.kind === kind).length);
        return n === '0' ? n : `${n} (${total((r) => (r.violations.some((v) => v.kind === kind) ? 1 : 0))} rounds)`;
      }),
    ]);
  }
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

const seconds = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : '-');

export function summary(r: RoundResult): string {
  const found = columns.flatMap(([kind, title]) => {
    const n = r.violations.filter((v) => v.kind === kind).length;
    return n > 0 ? [`${n} ${title}`] : [];
  });
  return (
    `${r.store}/${r.fault} round ${r.round} (seed ${r.seed}): ${r.ops} ops, ${r.acked} acknowledged, ${r.faults.length} faults, ` +
    `${r.unavailable} 503s (${r.ambiguous} ambiguous), resumed after ${r.resumeMs.map(seconds).join('/') || '-'} s, ` +
    unacknowledgedText(r) +
    `${found.join(', ') || 'no violation'}, ${(r.durationMs / 1000).toFixed(1)} s`
  );
}

/** `unacknowledged: 12 ETIMEDOUT, 3 ECONNRESET, ` — what the operations without an acknowledgement got. */
function unacknowledgedText(r: RoundResult): string {
  const kinds = Object.entries(r.unacknowledged).sort(([, a], [, b]) => b - a);
  return kinds.length === 0 ? '' : `unacknowledged: ${kinds.map(([kind, n]) => `${n} ${kind}`).join(', ')}, `;
}

/** Per kind, the first few violations in full (with the server's lines about their invocations), then a count of the rest. */
export function evidence(r: RoundResult, perKind = 5): string {
  if (r.violations.length === 0) return '';
  const out = [`## ${summary(r)}`];
  if (r.artifacts) out.push(`server log and executions kept in ${r.artifacts}`);
  out.push(
    `faults: ${r.faults.map((f) => `${f.kind} killed ${iso(f.killedAt)} (op ${f.atOp}), restarted ${iso(f.restartedAt)}`).join('; ') || 'none'}`,
  );
  for (const [kind] of columns) {
    const list = r.violations.filter((v) => v.kind === kind);
    for (const v of list.slice(0, perKind)) {
      out.push(`- ${v.kind} ${v.subject}: ${v.detail}`);
      out.push(...logExcerpt(r.serverLog, v.ids).map((l) => `    | ${l}`));
    }
    if (list.length > perKind) out.push(`- … and ${list.length - perKind} more ${kind}`);
  }
  return out.join('\n');
}

/** The server's lines that name one of `ids`, each with the line before and after it. */
export function logExcerpt(log: string, ids: string[], max = 16): string[] {
  if (ids.length === 0) return [];
  const lines = log.split('\n');
  const keep = new Set<number>();
  lines.forEach((l, i) => {
    if (ids.some((id) => l.includes(id)))
      for (const j of [i - 1, i, i + 1]) if (j >= 0 && j < lines.length) keep.add(j);
  });
  const picked = [...keep].sort((a, b) => a - b).map((i) => lines[i]!.slice(0, 400));
  if (picked.length === 0) return ['(the server log names none of these invocations)'];
  return picked.length > max ? [...picked.slice(0, max), `(${picked.length - max} more lines)`] : picked;
}
