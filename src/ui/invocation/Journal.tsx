/** The journal as a timeline: commands and notifications in order, with their values decoded. */
import { formatTime } from '../format';
import type { JournalItem } from './journal-entries';

export function Journal({ items }: { items: JournalItem[] }) {
  if (items.length === 0) return <div class="empty">The journal is empty (or was purged).</div>;
  return (
    <ol class="timeline" aria-label="journal">
      {items.map((e) => (
        <li key={e.index} class={e.category} data-index={e.index}>
          <span class="dot" />
          <div>
            <div class="head">
              <span class="muted mono small">#{e.index}</span>
              <strong>{e.kind}</strong>
              {e.name && <span class="mono">“{e.name}”</span>}
              <span class="muted small">{e.category}</span>
              {e.completionId !== undefined && <span class="muted small">completion {e.completionId}</span>}
            </div>
            {e.invokedTarget && (
              <div class="small">
                → {e.invokedTarget} {e.invokedId && <a class="mono" href={`/ui/invocations/${e.invokedId}`}>{e.invokedId}</a>}
              </div>
            )}
            {e.sleepUntil !== undefined && <div class="small muted">wakes up at {formatTime(e.sleepUntil)}</div>}
            {e.promiseName && <div class="small muted">promise “{e.promiseName}”</div>}
            {e.values.map((v, i) => (
              <div key={i} class="value">
                <div class="muted small">{v.label}</div>
                <pre class={v.kind === 'failure' ? 's-bad' : ''}>{v.text}</pre>
              </div>
            ))}
          </div>
        </li>
      ))}
    </ol>
  );
}
