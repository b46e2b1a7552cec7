/**
 * An invocation's machine history (sys_invocation_transitions), kept current from the live
 * stream: entries a commit appended arrive with its change and are added at once, so the
 * diagram moves without waiting for a query. A commit is atomic, so its entries are either
 * all in a loaded history or none; that is how a change that raced the load is recognised.
 */
import { useEffect, useState } from 'preact/hooks';
import { onLive, type LiveChange } from '../api/live';
import { query, sqlString } from '../api/query';
import { toMs } from '../format';

export interface HistoryRow {
  from: string | null;
  event: string;
  to: string;
  at: number;
  attempt: number;
}

interface TransitionRow {
  from_state?: string;
  event: string;
  to_state: string;
  at: string;
  attempt: number;
}

async function loadHistory(id: string): Promise<HistoryRow[]> {
  const rows = await query<TransitionRow>(
    `SELECT from_state, event, to_state, "at", attempt FROM sys_invocation_transitions WHERE id = ${sqlString(id)} ORDER BY index`,
  );
  return rows.map((r) => ({ from: r.from_state ?? null, event: r.event, to: r.to_state, at: toMs(r.at) ?? 0, attempt: Number(r.attempt) }));
}

const same = (a: HistoryRow, b: HistoryRow) => a.from === b.from && a.event === b.event && a.to === b.to && a.at === b.at;

/** Whether `history` already ends with the entries of one commit. */
function endsWith(history: HistoryRow[], commit: HistoryRow[]): boolean {
  if (commit.length > history.length) return false;
  const tail = history.slice(history.length - commit.length);
  return commit.every((e, i) => same(e, tail[i]!));
}

export function useHistory(id: string): { history: HistoryRow[] | undefined; error: Error | undefined } {
  const [history, setHistory] = useState<HistoryRow[]>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    let loaded: HistoryRow[] | undefined;
    let early: HistoryRow[][] = [];
    let stale = false;
    const load = () => {
      early = [];
      loaded = undefined;
      loadHistory(id).then(
        (rows) => {
          if (stale) return;
          for (const commit of early) if (!endsWith(rows, commit)) rows.push(...commit);
          loaded = rows;
          setHistory([...rows]);
        },
        (err: unknown) => !stale && setError(err instanceof Error ? err : new Error(String(err))),
      );
    };
    const onChange = (change: LiveChange | 'reconnected') => {
      if (change === 'reconnected' || change.deleted.includes(id)) return load();
      const mine = change.invocations.find((i) => i.id === id);
      if (!mine || mine.history.length === 0) return;
      const commit = mine.history.map((h) => ({ from: h.from, event: h.event, to: h.to, at: h.at, attempt: h.attempt }));
      if (!loaded) early.push(commit);
      else {
        loaded = [...loaded, ...commit];
        setHistory(loaded);
      }
    };
    setHistory(undefined);
    const unsubscribe = onLive(onChange);
    load();
    return () => {
      stale = true;
      unsubscribe();
    };
  }, [id]);
  return { history, error };
}
