/**
 * The journal as a timeline: the invocation's lifecycle (created, how long it ran, was
 * suspended or backed off, when it retries or starts next), then every command on a shared
 * time axis, from when it was journaled to when its result came. Compact: one line each;
 * detailed: with the values decoded under each line (input, results, output, failures).
 */
import type { ComponentChildren } from 'preact';
import type { InvocationRow } from '../api/invocations';
import type { Shown } from '../api/outcome';
import { Ago } from '../components/Ago';
import { formatDuration, formatTime, toMs } from '../format';
import { stateWord } from '../graph/words';
import { useNow } from '../hooks/clock';
import type { JournalItem } from '../api/journal';
import { timeInStates, timelineModel, type TimelineRow } from './timeline-model';
import { toneOf } from './tone';
import type { HistoryRow } from './use-history';

interface TimelineProps {
  items: JournalItem[];
  history: HistoryRow[];
  inv: InvocationRow;
  shown: Shown;
  detailed: boolean;
}

const invocationLink = (id: string) => (
  <a class="mono" href={`/ui/invocations/${id}`}>
    {id}
  </a>
);

/** What the entry is about, in one line: the callee, the sleep's end, the promise, the signal. */
function Subject({ item }: { item: JournalItem }) {
  if (item.callee) {
    const target = <strong>{item.callee.target}</strong>;
    return (
      <span class="subject">
        {item.callee.oneWay ? 'sends to' : 'calls'}{' '}
        {item.callee.id ? (
          <a href={`/ui/invocations/${item.callee.id}`} title={item.callee.id}>
            {target}
          </a>
        ) : (
          target
        )}
      </span>
    );
  }
  if (item.sleepUntil !== undefined) return <span class="subject muted">until {formatTime(item.sleepUntil)}</span>;
  if (item.promiseName) return <span class="subject">promise “{item.promiseName}”</span>;
  if (item.signal === 1) return <span class="subject">the cancel signal</span>;
  if (item.signal !== undefined)
    return (
      <span class="subject">
        {typeof item.signal === 'number' && item.signal >= 17
          ? `an awakeable (signal ${item.signal})`
          : `signal ${String(item.signal)}`}
      </span>
    );
  if (item.about) return <span class="subject">{invocationLink(item.about)}</span>;
  return null;
}

function Values({ row }: { row: TimelineRow }) {
  const values = [...row.item.values, ...row.completions.flatMap((c) => c.values)];
  if (values.length === 0) return null;
  return (
    <div class="jt-values">
      {values.map((v, i) => (
        <div key={i} class="value">
          <div class="muted small">{v.label}</div>
          <pre class={v.kind === 'failure' ? 's-bad' : ''}>{v.text}</pre>
        </div>
      ))}
    </div>
  );
}

export function Timeline({ items, history, inv, shown, detailed }: TimelineProps) {
  const now = useNow();
  const completedAt = toMs(inv.completed_at);
  const model = timelineModel(items, history, toMs(inv.created_at));
  const planned = [toMs(inv.next_retry_at), toMs(inv.scheduled_start_at), ...model.rows.map((r) => r.due)].filter(
    (t): t is number => t !== undefined,
  );
  const until = completedAt ?? now;
  // What is due later stretches the axis, but not past twice what has gone by.
  const end = Math.max(
    until,
    Math.min(Math.max(until, ...planned), model.start + 2 * Math.max(1, until - model.start)),
  );
  const span = Math.max(1, end - model.start);
  const pos = (t: number) => `${((Math.min(Math.max(t, model.start), end) - model.start) / span) * 100}%`;
  const width = (from: number, to: number) =>
    `max(3px, ${((Math.min(to, end) - Math.max(from, model.start)) / span) * 100}%)`;

  const spent = timeInStates(model.segments, until);
  const nextRetry = toMs(inv.next_retry_at);
  const startsAt = toMs(inv.scheduled_start_at);
  const summary: ComponentChildren[] = [
    <span key="c">created {formatTime(inv.created_at)}</span>,
    ...[...spent]
      .filter(([s]) => s !== 'completed' && s !== 'created')
      .map(([s, ms]) => (
        <span key={s}>
          {stateWord(s)} {formatDuration(ms)}
        </span>
      )),
  ];
  if (inv.status === 'backing-off' && nextRetry !== undefined)
    summary.push(
      <span key="r" class="s-backing-off">
        next retry <Ago at={nextRetry} />
      </span>,
    );
  if (inv.status === 'scheduled' && startsAt !== undefined)
    summary.push(
      <span key="s">
        starts <Ago at={startsAt} />
      </span>,
    );
  if (completedAt !== undefined)
    summary.push(
      <span key="d">
        {shown} after {formatDuration(completedAt - model.start)}
      </span>,
    );

  return (
    <div class={`jt ${detailed ? 'detailed' : 'compact'}`}>
      <div class="jt-label muted small">since creation</div>
      <div class="jt-axis">
        {[0, 0.5, 1].map((f) => (
          <span key={f} style={{ left: `${f * 100}%` }}>
            {f === 0 ? '0' : `+${formatDuration(span * f)}`}
          </span>
        ))}
      </div>
      <div />

      <div class="jt-label">
        <strong>Lifecycle</strong>
      </div>
      <div class="jt-track lifecycle" aria-label="lifecycle">
        {model.segments.map((s, i) => (
          <span
            key={i}
            class={`seg tone-${toneOf(s.state, shown)}`}
            style={{ left: pos(s.from), width: width(s.from, s.to ?? until) }}
            title={`${stateWord(s.state)} from ${formatTime(s.from)}${s.to ? ` for ${formatDuration(s.to - s.from)}` : ''}`}
          />
        ))}
        {nextRetry !== undefined && inv.status === 'backing-off' && (
          <span class="due" style={{ left: pos(nextRetry) }} title={`next retry at ${formatTime(nextRetry)}`} />
        )}
      </div>
      <div class="jt-dur">{formatDuration(until - model.start)}</div>
      <div class="jt-summary small" aria-label="lifecycle summary">
        {summary}
      </div>

      {model.rows.map((r) => {
        const waiting = r.end === undefined && completedAt === undefined;
        return (
          <div key={r.item.index} class={`jt-row ${r.item.category}`} data-index={r.item.index} data-kind={r.item.kind}>
            <div class="jt-label">
              <span class="muted mono small">#{r.item.index}</span> <strong>{r.item.kind}</strong>{' '}
              {r.item.name && <span class="mono">“{r.item.name}”</span>} <Subject item={r.item} />
            </div>
            <div class="jt-track">
              {r.end === r.start || (r.end === undefined && !waiting) ? (
                <span class="tick" style={{ left: pos(r.start) }} title={formatTime(r.start)} />
              ) : (
                <span
                  class={`bar ${waiting ? 'waiting' : ''}`}
                  style={{ left: pos(r.start), width: width(r.start, r.end ?? until) }}
                  title={`${formatTime(r.start)} → ${r.end ? formatTime(r.end) : 'waiting'}`}
                />
              )}
              {waiting && r.due !== undefined && (
                <span
                  class="planned"
                  style={{ left: pos(until), width: width(until, r.due) }}
                  title={`due at ${formatTime(r.due)}`}
                />
              )}
            </div>
            <div class="jt-dur">
              {r.end !== undefined && r.end > r.start ? (
                formatDuration(r.end - r.start)
              ) : waiting ? (
                <span class="muted">waiting</span>
              ) : (
                ''
              )}
            </div>
            {detailed && <Values row={r} />}
          </div>
        );
      })}
      {items.length === 0 && <div class="empty jt-full">The journal is empty (not started, or purged).</div>}
    </div>
  );
}
