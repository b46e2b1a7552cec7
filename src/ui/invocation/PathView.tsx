/**
 * The path the invocation took through its machine, in words (graph/words.ts): compact, as a
 * strip of steps with a slider to step back through them, so the journal stays in view; with
 * `full`, also the whole machine with the path drawn over it, and every step listed. The slider
 * follows new entries while it is at the end.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Shown } from '../api/outcome';
import { Elapsed } from '../components/Ago';
import { formatDuration, formatTime } from '../format';
import { invocationLayout } from '../graph/layouts';
import { MachineDiagram } from '../graph/MachineDiagram';
import { eventWord, stateWord } from '../graph/words';
import { pathSteps, type PathStep } from './path-steps';
import { toneOf } from './tone';
import type { HistoryRow } from './use-history';

interface PathProps {
  history: HistoryRow[];
  shown: Shown | undefined;
  full: boolean;
  /** The page's address with the other mode. */
  toggleHref: string;
}

/** "attempt 3" for a step: the attempt that failed on `attemptFailed`, else the one running. */
function attemptLabel(h: HistoryRow): string {
  return h.event === 'attemptFailed' ? `attempt ${h.attempt} failed` : `attempt ${h.attempt + 1}`;
}

function Step({
  step,
  history,
  shown,
  at,
  select,
}: {
  step: PathStep;
  history: HistoryRow[];
  shown: Shown | undefined;
  at: number;
  select: (n: number) => void;
}) {
  const first = history[step.first]!;
  const last = history[step.last]!;
  const next = history[step.last + 1];
  const cls = [
    'step',
    at >= step.first && at <= step.last ? 'selected' : '',
    step.first > at ? 'future' : '',
    step.loop ? 'loop' : '',
  ].join(' ');
  const word = eventWord(first.event, first.from, shown);
  return (
    <li
      class={cls}
      onClick={() => select(step.last + 1)}
      data-event={first.event}
      title={`${formatTime(first.at)} · ${attemptLabel(last)}`}
    >
      {step.first > 0 && <span class="arrow">{word}</span>}
      <span class={`chip tone-${toneOf(last.to, shown)}`}>
        {step.loop ? (
          <>
            {stateWord(step.loop.a)} ⇄ {stateWord(step.loop.b)} <strong>×{step.loop.times}</strong>
          </>
        ) : (
          stateWord(last.to)
        )}
        <span class="for">
          {next ? (
            formatDuration(next.at - (step.loop ? first.at : last.at))
          ) : last.to === 'completed' ? (
            ''
          ) : (
            <Elapsed since={last.at} />
          )}
        </span>
      </span>
    </li>
  );
}

export function PathView({ history, shown, full, toggleHref }: PathProps) {
  const [step, setStep] = useState(history.length);
  const [following, setFollowing] = useState(true);
  useEffect(() => {
    if (following) setStep(history.length);
  }, [history.length, following]);
  const move = (n: number) => {
    setStep(n);
    setFollowing(n === history.length);
  };

  const shownPath = history.slice(0, step);
  const current = shownPath.at(-1)?.to;
  const tone = toneOf(current, step === history.length ? shown : undefined);
  return (
    <div class="card" id="path" data-current={current ?? ''}>
      <div class="row" style={{ justifyContent: 'space-between' }}>
        <h2 style={{ margin: 0 }}>Path</h2>
        <span class="muted small">{following ? 'following live' : `step ${step} of ${history.length}`}</span>
        <span class="spacer" style={{ flex: 1 }} />
        <a class="btn small" href={toggleHref} aria-label={full ? 'path only' : 'whole machine'}>
          {full ? 'Path only' : 'Whole machine'}
        </a>
      </div>
      <ol class="path-strip" aria-label="path">
        {pathSteps(history).map((s) => (
          <Step key={s.first} step={s} history={history} shown={shown} at={step - 1} select={move} />
        ))}
      </ol>
      <div class="slider">
        <input
          type="range"
          min={1}
          max={Math.max(1, history.length)}
          value={step}
          aria-label="step through the path"
          onInput={(e) => move(Number(e.currentTarget.value))}
        />
        <span class="mono small">
          {step}/{history.length}
        </span>
      </div>
      {full && (
        <div class="grid path-view">
          <div id="machine">
            <div class="muted small">
              machines/invocation.ts, in Restate's words (hover a label for the machine's own)
            </div>
            <MachineDiagram
              layout={invocationLayout}
              current={current}
              tone={tone}
              path={shownPath}
              title="invocation machine with the path this invocation took"
            />
          </div>
          <PathList history={history} shown={shown} step={step} following={following} move={move} />
        </div>
      )}
    </div>
  );
}

/** Every step with its time; scrolled so that the selected one (the newest, when following) is in view. */
function PathList({
  history,
  shown,
  step,
  following,
  move,
}: {
  history: HistoryRow[];
  shown: Shown | undefined;
  step: number;
  following: boolean;
  move: (n: number) => void;
}) {
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    const el = list.current;
    if (!el) return;
    if (following) el.scrollTop = el.scrollHeight;
    else el.querySelector('li.selected')?.scrollIntoView({ block: 'nearest' });
  }, [history.length, step, following]);
  return (
    <ol class="timeline path-list" aria-label="path steps" ref={list}>
      {history.map((h, i) => (
        <li
          key={i}
          class={`${i === step - 1 ? 'selected' : ''} ${i >= step ? 'future' : ''}`}
          onClick={() => move(i + 1)}
          style={{ cursor: 'pointer' }}
        >
          <span class="dot" />
          <div>
            <div class="head">
              <span>{h.from === null ? '∅' : stateWord(h.from)}</span>
              <span class="muted">—{eventWord(h.event, h.from, shown)}→</span>
              <strong>{stateWord(h.to)}</strong>
            </div>
            <div class="muted small">
              {formatTime(h.at)}
              {i > 0 && ` · +${formatDuration(h.at - history[i - 1]!.at)}`} · {attemptLabel(h)}
            </div>
          </div>
        </li>
      ))}
    </ol>
  );
}
