/**
 * One invocation as a single JSON file, for a bug report: its target and status, its input
 * and headers, every journal entry (decoded, and as the server gave it), the path it took
 * through its machine, and every attempt's failure.
 */
import type { InvocationRow } from '../api/invocations';
import { shownStatus } from '../api/outcome';
import type { JournalItem } from '../api/journal';
import type { HistoryRow } from './use-history';

export function invocationExport(inv: InvocationRow, journal: JournalItem[], history: HistoryRow[]) {
  const input = journal.find((e) => e.kind === 'Input');
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  return {
    exported_at: new Date().toISOString(),
    id: inv.id,
    target: inv.target,
    status: shownStatus(inv),
    invocation: inv,
    input: input?.values.find((v) => v.label === 'input')?.text ?? null,
    headers: input?.headers ?? [],
    journal: journal.map((e) => ({
      index: e.index,
      type: `${e.category === 'command' ? 'Command' : e.category === 'notification' ? 'Notification' : 'Other'}: ${e.kind}`,
      name: e.name,
      appended_at: iso(e.appendedAt),
      callee: e.callee,
      values: e.values,
      entry: e.json,
    })),
    path: history.map((h) => ({ from: h.from, event: h.event, to: h.to, at: iso(h.at), retries: h.attempt })),
    failures: history.filter((h) => h.failure).map((h) => ({ attempt: h.attempt, at: iso(h.at), ...h.failure })),
  };
}

/** Hands the browser the export as a download named after the invocation. */
export function downloadExport(data: ReturnType<typeof invocationExport>): void {
  const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `${data.id}.json`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
