/**
 * The invocation's machine with where it is and the path it took: the diagram, a slider to
 * step back through the path, and the path as a timeline. The slider follows new entries
 * while it is at the end.
 */
import { useEffect, useState } from 'preact/hooks';
import { invocationLayout } from '../graph/layouts';
import { MachineDiagram } from '../graph/MachineDiagram';
import { formatDuration, formatTime } from '../format';
import type { HistoryRow } from './use-history';

export function PathView({ history }: { history: HistoryRow[] }) {
  const [step, setStep] = useState(history.length);
  const [following, setFollowing] = useState(true);
  useEffect(() => {
    if (following) setStep(history.length);
  }, [history.length, following]);

  const shown = history.slice(0, step);
  const current = shown.at(-1)?.to;
  const move = (n: number) => {
    setStep(n);
    setFollowing(n === history.length);
  };
  return (
    <div class="grid path-view">
      <div class="card" id="machine">
        <div class="row" style={{ justifyContent: 'space-between' }}>
          <h2>State machine</h2>
          <span class="muted small">machines/invocation.ts</span>
        </div>
        <MachineDiagram layout={invocationLayout} current={current} path={shown} title="invocation machine with the path this invocation took" />
      </div>
      <div class="card" id="path">
        <div class="row" style={{ justifyContent: 'space-between' }}>
          <h2>Path</h2>
          <span class="muted small">{following ? 'following live' : `step ${step} of ${history.length}`}</span>
        </div>
        <div class="slider">
        <input type="range" min={1} max={Math.max(1, history.length)} value={step} aria-label="step through the path" onInput={(e) => move(Number(e.currentTarget.value))} />
        <span class="mono small">
          {step}/{history.length}
        </span>
        </div>
        <ol class="timeline" aria-label="path">
        {history.map((h, i) => (
          <li key={i} class={`${i === step - 1 ? 'selected' : ''} ${i >= step ? 'future' : ''}`} onClick={() => move(i + 1)} style={{ cursor: 'pointer' }}>
            <span class="dot" />
            <div>
              <div class="head">
                <span class="mono">{h.from ?? '∅'}</span>
                <span class="muted">—{h.event}→</span>
                <strong class="mono">{h.to}</strong>
              </div>
              <div class="muted small">
                {formatTime(h.at)}
                {i > 0 && ` · +${formatDuration(h.at - history[i - 1]!.at)}`} · attempt {h.attempt + 1}
              </div>
            </div>
          </li>
        ))}
        </ol>
      </div>
    </div>
  );
}
