/**
 * Schedules (redstate's own, issue 26): the list with each one's next fire and last run, one
 * schedule's next 5 fire times and recent runs (linked to their invocations), pause, resume,
 * trigger now and delete, and a form to create or edit one with a live preview of the fire
 * times its timing gives. Reloads when invocations change (every fire makes one).
 */
import { useEffect, useState } from 'preact/hooks';
import {
  createSchedule,
  deleteSchedule,
  listSchedules,
  previewSchedule,
  scheduleAction,
  updateSchedule,
  type Schedule,
  type ScheduleBody,
  type Timing,
} from '../api/schedules';
import { Ago } from '../components/Ago';
import { ConfirmButton } from '../components/Confirm';
import { ErrorBox } from '../components/ErrorBox';
import { formatTime } from '../format';
import { useLoad } from '../hooks/use-load';

const targetText = (s: Schedule) =>
  [s.target.service, s.target.key, s.target.handler].filter((p) => p !== undefined).join('/');
const timingText = (s: Schedule) => (s.cron !== undefined ? `${s.cron} (${s.timezone ?? 'UTC'})` : (s.interval ?? ''));

interface Draft {
  id: string;
  service: string;
  handler: string;
  key: string;
  input: string;
  kind: 'cron' | 'interval';
  cron: string;
  timezone: string;
  interval: string;
  overlap: Schedule['overlap'];
  catch_up: Schedule['catch_up'];
  catch_up_window: string;
}

const EMPTY: Draft = {
  id: '',
  service: '',
  handler: '',
  key: '',
  input: '',
  kind: 'cron',
  cron: '0 9 * * 1-5',
  timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  interval: 'R/2026-12-01T00:00:00Z/PT15M',
  overlap: 'skip',
  catch_up: 'one',
  catch_up_window: '1h',
};

function draftOf(s: Schedule): Draft {
  return {
    id: s.id,
    service: s.target.service,
    handler: s.target.handler,
    key: s.target.key ?? '',
    input: s.input === undefined ? '' : JSON.stringify(s.input),
    kind: s.cron !== undefined ? 'cron' : 'interval',
    cron: s.cron ?? EMPTY.cron,
    timezone: s.timezone ?? 'UTC',
    interval: s.interval ?? EMPTY.interval,
    overlap: s.overlap,
    catch_up: s.catch_up,
    catch_up_window: s.catch_up_window,
  };
}

const timingOf = (d: Draft): Timing =>
  d.kind === 'cron' ? { cron: d.cron, timezone: d.timezone } : { interval: d.interval };

function bodyOf(d: Draft): ScheduleBody {
  return {
    ...(d.id.trim() !== '' ? { id: d.id.trim() } : {}),
    target: { service: d.service, handler: d.handler, ...(d.key !== '' ? { key: d.key } : {}) },
    ...(d.input.trim() !== '' ? { input: JSON.parse(d.input) as unknown } : {}),
    ...timingOf(d),
    overlap: d.overlap,
    catch_up: d.catch_up,
    catch_up_window: d.catch_up_window,
  };
}

/** The fire times the draft's timing gives, asked of the server as it is typed. */
function usePreview(timing: Timing): { times?: string[]; error?: string } {
  const [preview, setPreview] = useState<{ times?: string[]; error?: string }>({});
  const key = JSON.stringify(timing);
  useEffect(() => {
    let current = true;
    const timer = setTimeout(() => {
      previewSchedule(timing).then(
        (times) => current && setPreview({ times }),
        (err: unknown) => current && setPreview({ error: (err as Error).message }),
      );
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [key]);
  return preview;
}

function ScheduleForm({
  editing,
  onDone,
}: {
  editing: Schedule | undefined;
  onDone: (s: Schedule | undefined) => void;
}) {
  // The form is keyed by what it edits (below), so a new target starts a new draft.
  const [d, setD] = useState<Draft>(editing ? draftOf(editing) : EMPTY);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const preview = usePreview(timingOf(d));
  // From the latest draft, not this render's: two fields typed before a re-render both count.
  const set = (change: Partial<Draft>) => setD((prev) => ({ ...prev, ...change }));
  const text = (field: keyof Draft, label: string, placeholder = '', wide = false) => (
    <label class="field">
      <span>{label}</span>
      <input
        name={field}
        value={d[field]}
        placeholder={placeholder}
        style={wide ? { minWidth: '260px' } : {}}
        onInput={(e) => set({ [field]: e.currentTarget.value })}
      />
    </label>
  );
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const body = bodyOf(d);
      const { id: _id, ...change } = body;
      onDone(editing ? await updateSchedule(editing.id, change) : await createSchedule(body));
      if (!editing) setD(EMPTY);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="card stack"
      id="schedule-form"
      onSubmit={submit}
      aria-label={editing ? 'edit the schedule' : 'create a schedule'}
    >
      <h2>{editing ? `Edit ${editing.id}` : 'New schedule'}</h2>
      <div class="row">
        {!editing && text('id', 'Id', 'generated when empty')}
        {text('service', 'Service')}
        {text('key', 'Key', 'objects; a workflow id template: {schedule_id}-{fire_time}')}
        {text('handler', 'Handler')}
        {text('input', 'Input (JSON)', 'none', true)}
      </div>
      <div class="row">
        <label class="check">
          <input type="radio" name="kind" checked={d.kind === 'cron'} onChange={() => set({ kind: 'cron' })} /> cron
        </label>
        <label class="check">
          <input type="radio" name="kind" checked={d.kind === 'interval'} onChange={() => set({ kind: 'interval' })} />{' '}
          ISO 8601 interval
        </label>
        {d.kind === 'cron' ? (
          <>
            {text('cron', 'Cron (5 fields, or 6 with seconds first)', '*/2 * * * * *', true)}
            {text('timezone', 'Time zone (IANA)', 'UTC')}
          </>
        ) : (
          text('interval', 'Interval R[n]/start/duration', 'R/2026-12-01T00:00:00Z/PT15M', true)
        )}
      </div>
      <div class="row">
        <label class="field">
          <span>While the previous run goes on</span>
          <select
            name="overlap"
            value={d.overlap}
            onChange={(e) => set({ overlap: e.currentTarget.value as Draft['overlap'] })}
          >
            <option value="skip">skip the fire</option>
            <option value="buffer_one">hold one back until it ends</option>
            <option value="allow_all">start it anyway</option>
          </select>
        </label>
        <label class="field">
          <span>After downtime</span>
          <select
            name="catch_up"
            value={d.catch_up}
            onChange={(e) => set({ catch_up: e.currentTarget.value as Draft['catch_up'] })}
          >
            <option value="one">one fire for the missed times</option>
            <option value="all">one fire for each missed time</option>
          </select>
        </label>
        {text('catch_up_window', 'Within (catch-up window)')}
      </div>
      <div id="schedule-preview" class="small">
        {preview.error ? (
          <div class="error" role="alert">
            {preview.error}
          </div>
        ) : (
          <>
            <span class="muted">Next fire times: </span>
            {(preview.times ?? []).map((t) => (
              <span key={t} class="mono preview-time">
                {formatTime(t)}{' '}
              </span>
            ))}
          </>
        )}
      </div>
      {error && (
        <div class="error" role="alert">
          {error}
        </div>
      )}
      <div class="row">
        <button class="primary" type="submit" disabled={busy}>
          {editing ? 'Save' : 'Create'}
        </button>
        {editing && (
          <button type="button" onClick={() => onDone(undefined)}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

function Details({ s, onChanged, onEdit }: { s: Schedule; onChanged: () => void; onEdit: () => void }) {
  const [error, setError] = useState<string>();
  const act = async (action: 'pause' | 'resume' | 'trigger') => {
    setError(undefined);
    try {
      await scheduleAction(s.id, action);
      onChanged();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div class="card stack" id="schedule-details" data-id={s.id}>
      <div class="row" style={{ justifyContent: 'space-between' }}>
        <h2 class="mono">{s.id}</h2>
        <div class="row">
          {s.paused ? (
            <button onClick={() => void act('resume')}>Resume</button>
          ) : (
            <button onClick={() => void act('pause')}>Pause</button>
          )}
          <button onClick={() => void act('trigger')}>Trigger now</button>
          <button onClick={onEdit}>Edit</button>
          <ConfirmButton
            label="Delete"
            danger
            title="Delete this schedule?"
            message={<p>It fires no more; the invocations it made stay.</p>}
            confirmLabel="Delete"
            onConfirm={async () => {
              await deleteSchedule(s.id);
              onChanged();
            }}
          />
        </div>
      </div>
      {error && (
        <div class="error" role="alert">
          {error}
        </div>
      )}
      <dl class="kv">
        <dt>Target</dt>
        <dd class="mono">{targetText(s)}</dd>
        <dt>Timing</dt>
        <dd class="mono">{timingText(s)}</dd>
        <dt>Policies</dt>
        <dd>
          overlap <span class="mono">{s.overlap}</span>, catch-up <span class="mono">{s.catch_up}</span> within{' '}
          <span class="mono">{s.catch_up_window}</span>
        </dd>
        <dt>Next 5 fire times</dt>
        <dd id="next-fire-times">
          {s.paused ? (
            <span class="muted">paused</span>
          ) : s.next_fire_times.length === 0 ? (
            <span class="muted">none left</span>
          ) : (
            <ol style={{ margin: 0, paddingLeft: '18px' }}>
              {s.next_fire_times.map((t) => (
                <li key={t} class="mono">
                  {formatTime(t)}{' '}
                  <span class="muted">
                    (<Ago at={t} />)
                  </span>
                </li>
              ))}
            </ol>
          )}
        </dd>
      </dl>
      <h3>Recent runs</h3>
      <table id="recent-runs">
        <thead>
          <tr>
            <th>Fire time</th>
            <th>Outcome</th>
            <th>Invocation</th>
          </tr>
        </thead>
        <tbody>
          {[...s.recent_runs].reverse().map((r) => (
            <tr key={`${r.at}-${r.outcome}`}>
              <td class="mono">{formatTime(r.at)}</td>
              <td>
                <span
                  class={`badge ${r.outcome === 'failed' ? 's-bad' : r.outcome === 'started' || r.outcome === 'triggered' ? 's-ok' : ''}`}
                >
                  {r.outcome}
                </span>
                {r.error && <span class="small muted"> {r.error}</span>}
              </td>
              <td>
                {r.invocation_id && (
                  <a class="mono small" href={`/ui/invocations/${r.invocation_id}`}>
                    {r.invocation_id}
                  </a>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {s.recent_runs.length === 0 && <div class="empty">No runs yet.</div>}
    </div>
  );
}

export function Schedules() {
  const list = useLoad(listSchedules, [], { staleOn: (c) => c.invocations.length > 0 });
  const [selected, setSelected] = useState<string>();
  const [editing, setEditing] = useState<Schedule>();
  const schedules = list.data ?? [];
  const shown = schedules.find((s) => s.id === selected) ?? schedules[0];
  return (
    <div class="stack">
      <div class="page-head">
        <h1>Schedules</h1>
        <span class="sub">
          {list.data ? `${schedules.length} schedule${schedules.length === 1 ? '' : 's'}` : 'loading…'}
        </span>
      </div>
      <ErrorBox error={list.error} />
      <div class="card">
        <table id="schedules">
          <thead>
            <tr>
              <th>Schedule</th>
              <th>Target</th>
              <th>Timing</th>
              <th>Next fire</th>
              <th>Last run</th>
              <th>Fires</th>
            </tr>
          </thead>
          <tbody>
            {schedules.map((s) => (
              <tr
                key={s.id}
                data-id={s.id}
                class={s.id === shown?.id ? 'selected' : ''}
                onClick={() => setSelected(s.id)}
                style={{ cursor: 'pointer' }}
              >
                <td class="mono">{s.id}</td>
                <td class="mono small">{targetText(s)}</td>
                <td class="mono small">{timingText(s)}</td>
                <td>
                  {s.paused ? (
                    <span class="badge">paused</span>
                  ) : s.next_fire_at ? (
                    <Ago at={s.next_fire_at} />
                  ) : (
                    <span class="muted">none left</span>
                  )}
                </td>
                <td>
                  {s.last_invocation_id ? (
                    <a
                      class="mono small"
                      href={`/ui/invocations/${s.last_invocation_id}`}
                      onClick={(e) => e.stopPropagation()}
                    >
                      <Ago at={s.last_fire_at} />
                    </a>
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
                <td>{s.fires}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.data?.length === 0 && <div class="empty">No schedules yet: create one below.</div>}
      </div>
      {shown && (
        <Details
          s={shown}
          onChanged={list.reload}
          onEdit={() => {
            setEditing(shown);
            document.getElementById('schedule-form')?.scrollIntoView();
          }}
        />
      )}
      <ScheduleForm
        key={editing?.id ?? ''}
        editing={editing}
        onDone={(s) => {
          setEditing(undefined);
          if (s) setSelected(s.id);
          list.reload();
        }}
      />
    </div>
  );
}
