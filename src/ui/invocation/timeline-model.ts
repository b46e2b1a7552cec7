/**
 * The journal on a time axis: each command with when it started and when its result came
 * (the notification that completes it), each notification no command waits for on its own,
 * and the invocation's lifecycle (the states of its path, one after the other).
 */
import type { JournalItem } from '../api/journal';
import type { HistoryRow } from './use-history';

export interface TimelineRow {
  item: JournalItem;
  start: number;
  /** When its result came; undefined while it waits. */
  end?: number;
  /** When it is due to end, for a sleep not over yet. */
  due?: number;
  /** The notifications folded into this command, in order. */
  completions: JournalItem[];
}

export interface Segment {
  state: string;
  from: number;
  /** Undefined for the state it is in now. */
  to?: number;
}

export interface TimelineModel {
  rows: TimelineRow[];
  segments: Segment[];
  start: number;
}

export function timelineModel(
  items: JournalItem[],
  history: HistoryRow[],
  createdAt: number | undefined,
): TimelineModel {
  const byCompletion = new Map<number, JournalItem>();
  for (const i of items)
    if (i.category === 'notification' && i.completes !== undefined) byCompletion.set(i.completes, i);
  const folded = new Set<number>();
  const rows: TimelineRow[] = [];
  const start = Math.min(
    createdAt ?? Infinity,
    history[0]?.at ?? Infinity,
    ...items.map((i) => i.appendedAt ?? Infinity),
  );
  for (const item of items) {
    if (item.category !== 'command') continue;
    const completions = item.awaits.map((c) => byCompletion.get(c)).filter((n): n is JournalItem => n !== undefined);
    completions.forEach((n) => folded.add(n.index));
    const at = item.appendedAt ?? start;
    // A command waits for its result (the first id it names); one with nothing to wait for is a moment.
    const result = item.awaits.length === 0 ? item : byCompletion.get(item.awaits[0]!);
    rows.push({
      item,
      start: at,
      ...(result ? { end: result.appendedAt ?? at } : {}),
      ...(item.sleepUntil !== undefined && !result ? { due: item.sleepUntil } : {}),
      completions: completions.sort((a, b) => a.index - b.index),
    });
  }
  for (const item of items) {
    if (item.category === 'command' || folded.has(item.index)) continue;
    const at = item.appendedAt ?? start;
    rows.push({ item, start: at, end: at, completions: [] });
  }
  rows.sort((a, b) => a.item.index - b.item.index);
  const segments = history.map((h, i) => ({
    state: h.to,
    from: h.at,
    ...(history[i + 1] ? { to: history[i + 1]!.at } : {}),
  }));
  return { rows, segments, start: Number.isFinite(start) ? start : Date.now() };
}

/** Time spent in each state over the segments, until `now` for the current one. */
export function timeInStates(segments: Segment[], now: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of segments) out.set(s.state, (out.get(s.state) ?? 0) + Math.max(0, (s.to ?? now) - s.from));
  return out;
}
