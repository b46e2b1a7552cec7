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

/** An attempt's failure, as the history keeps it. */
export interface AttemptFailure {
  code: number;
  message: string;
  stacktrace?: string;
  relatedCommandName?: string;
  relatedCommandIndex?: number;
  errorCode?: string;
}

export interface HistoryRow {
  from: string | null;
  event: string;
  to: string;
  at: number;
  /** Failed attempts so far (the invocation's retry count once the event was taken). */
  attempt: number;
  failure?: AttemptFailure;
}

interface TransitionRow {
  from_state?: string;
  event: string;
  to_state: string;
  at: string;
  attempt: number;
  failure_json?: string;
}

/** sys_journal_events' TransientError shape (src/query/rows.ts). */
interface FailureJson {
  error_code: number;
  error_message: string;
  error_stacktrace?: string;
  related_command_name?: string;
  related_command_index?: number;
  restate_doc_error_code?: string;
}

function failureOf(json: string): AttemptFailure {
  const f = JSON.parse(json) as FailureJson;
  return {
    code: f.error_code,
    message: f.error_message,
    ...(f.error_stacktrace ? { stacktrace: f.error_stacktrace } : {}),
    ...(f.related_command_name ? { relatedCommandName: f.related_command_name } : {}),
    ...(f.related_command_index !== undefined ? { relatedCommandIndex: f.related_command_index } : {}),
    ...(f.restate_doc_error_code ? { errorCode: f.restate_doc_error_code } : {}),
  };
}

export async function loadHistory(id: string): Promise<HistoryRow[]> {
  const rows = await query<TransitionRow>(
    `SELECT from_state, event, to_state, "at", attempt, failure_json FROM sys_invocation_transitions WHERE id = ${sqlString(id)} ORDER BY index`,
  );
  return rows.map((r) => ({
    from: r.from_state ?? null,
    event: r.event,
    to: r.to_state,
    at: toMs(r.at) ?? 0,
    attempt: Number(r.attempt),
    ...(r.failure_json ? { failure: failureOf(r.failure_json) } : {}),
  }));
}

const same = (a: HistoryRow, b: HistoryRow) =>
  a.from === b.from && a.event === b.event && a.to === b.to && a.at === b.at;

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
          // A commit that raced the load is in it when its first entry is (entries carry their time).
          for (const commit of early) if (!rows.some((r) => same(r, commit[0]!))) rows.push(...commit);
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
      const commit: HistoryRow[] = mine.history.map((h) => ({
        from: h.from,
        event: h.event,
        to: h.to,
        at: h.at,
        attempt: h.attempt,
        ...(h.failure ? { failure: h.failure } : {}),
      }));
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
