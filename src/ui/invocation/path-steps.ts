/**
 * The path as the compact view shows it: one step per history entry, with retry loops
 * (running ⇄ backing-off, again and again) folded into one step that says how often.
 */
import type { HistoryRow } from './use-history';

export interface PathStep {
  /** Indexes into the history, inclusive: one entry, or a folded loop. */
  first: number;
  last: number;
  /** For a folded loop: the two states it went between (from where it entered), and how many times round. */
  loop?: { a: string; b: string; times: number };
}

const key = (h: HistoryRow) => `${h.from}|${h.event}|${h.to}`;

/** Folds runs of at least two identical two-entry rounds (A→B, B→A) into one step. */
export function pathSteps(history: HistoryRow[]): PathStep[] {
  const steps: PathStep[] = [];
  let i = 0;
  while (i < history.length) {
    const a = history[i]!;
    const b = history[i + 1];
    if (b && a.from !== null && a.to === b.from && b.to === a.from) {
      let times = 1;
      while (
        i + 2 * times + 1 < history.length &&
        key(history[i + 2 * times]!) === key(a) &&
        key(history[i + 2 * times + 1]!) === key(b)
      ) {
        times++;
      }
      if (times >= 2) {
        steps.push({ first: i, last: i + 2 * times - 1, loop: { a: a.from, b: a.to, times } });
        i += 2 * times;
        continue;
      }
    }
    steps.push({ first: i, last: i });
    i++;
  }
  return steps;
}
