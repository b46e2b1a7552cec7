/**
 * How the invocation ended when it did not succeed, and every attempt that failed on the way
 * (the history keeps each one, src/runtime/kernel/transition-history.ts), newest first, each
 * with its stack trace. Killed and cancelled are shown as the operator's doing, not as errors.
 */
import type { InvocationRow } from '../api/invocations';
import type { Shown } from '../api/outcome';
import { formatTime } from '../format';
import type { HistoryRow } from './use-history';

function Attempt({ h, open }: { h: HistoryRow; open: boolean }) {
  const f = h.failure!;
  return (
    <li data-attempt={h.attempt}>
      <div class="row">
        <strong>Attempt {h.attempt}</strong>
        <span class="muted small">{formatTime(h.at)}</span>
        {f.errorCode && <span class="muted small">{f.errorCode}</span>}
        {f.relatedCommandName !== undefined && <span class="muted small">at “{f.relatedCommandName}”</span>}
      </div>
      <p class="error">
        [{f.code}] {f.message}
      </p>
      {f.stacktrace && (
        <details open={open}>
          <summary>Stack trace</summary>
          <pre class="stacktrace">{f.stacktrace}</pre>
        </details>
      )}
    </li>
  );
}

export function Failures({ inv, shown, history }: { inv: InvocationRow; shown: Shown; history: HistoryRow[] }) {
  const attempts = history.filter((h) => h.failure).reverse();
  const ended = inv.completion_failure !== undefined;
  if (!ended && attempts.length === 0) return null;
  const stopped = shown === 'killed' || shown === 'cancelled';
  return (
    <div class="card" id="failure">
      <h2>{stopped ? `${shown[0]!.toUpperCase()}${shown.slice(1)}` : ended ? 'Failure' : 'Failed attempts'}</h2>
      {ended && (
        <p class={stopped ? 'notice' : 'error'}>
          {stopped ? `${shown} by an operator (${inv.completion_failure})` : inv.completion_failure}
        </p>
      )}
      {attempts.length > 0 && (
        <>
          <h3>
            {attempts.length} failed attempt{attempts.length === 1 ? '' : 's'}
            {inv.status === 'backing-off' && ', retrying'}
          </h3>
          <ol class="attempts">
            {attempts.map((h, i) => (
              <Attempt key={h.at} h={h} open={i === 0} />
            ))}
          </ol>
        </>
      )}
    </div>
  );
}
