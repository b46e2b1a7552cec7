/** Relative times that keep counting: "12 s ago", "in 40 s", "running for 3 min 2 s". */
import { formatDuration, formatTime, relative } from '../format';
import { useNow } from '../hooks/clock';

/** A moment as "12 s ago" / "in 40 s", with the exact time on hover. */
export function Ago({ at }: { at: unknown }) {
  const now = useNow();
  return <span title={formatTime(at)}>{relative(at, now)}</span>;
}

/** From `since` until `until`, or until now (counting) while there is no `until`. */
export function Elapsed({ since, until }: { since: number | undefined; until?: number | undefined }) {
  const now = useNow();
  if (since === undefined) return <span class="muted">—</span>;
  return (
    <span class={until === undefined ? 'counting' : ''}>{formatDuration(Math.max(0, (until ?? now) - since))}</span>
  );
}
