/**
 * A service's settings: shown, and edited through `PATCH /services/{name}` (retentions,
 * timeouts, whether the ingress may call it, and redstate's retry policy and state TTL). Only the fields
 * changed are sent; the server's answer (normalised durations) replaces what is shown, and
 * its refusal is shown as it words it.
 */
import { useState } from 'preact/hooks';
import { modifyService, type ServiceDetails, type ServicePatch } from '../api/admin';
import { ErrorBox } from '../components/ErrorBox';

type DurationField =
  | 'idempotency_retention'
  | 'journal_retention'
  | 'workflow_completion_retention'
  | 'inactivity_timeout'
  | 'abort_timeout'
  | 'state_ttl';

const DURATIONS: Array<[DurationField, string, string]> = [
  ['idempotency_retention', 'Idempotency retention', 'how long a request with an idempotency key is deduplicated'],
  ['journal_retention', 'Journal retention', 'how long a completed invocation keeps its journal'],
  ['workflow_completion_retention', 'Workflow retention', "how long a workflow run's result is kept"],
  ['inactivity_timeout', 'Inactivity timeout', 'silence before the server asks the handler to suspend'],
  ['abort_timeout', 'Abort timeout', 'then, before it cuts the attempt off'],
  [
    'state_ttl',
    'State TTL',
    "a key whose state is not written this long loses it; 0s: never (a handler's own TTL is set through the API)",
  ],
];

interface Draft {
  public: boolean;
  durations: Partial<Record<DurationField, string>>;
  initial_interval: string;
  exponentiation_factor: string;
  max_attempts: string;
  max_interval: string;
  on_max_attempts: 'Pause' | 'Kill';
}

function draftOf(s: ServiceDetails): Draft {
  const p = s.retry_policy;
  return {
    public: s.public,
    durations: Object.fromEntries(DURATIONS.map(([k]) => [k, (s[k] as string | null | undefined) ?? ''])),
    initial_interval: p?.initial_interval ?? '',
    exponentiation_factor: p ? String(p.exponentiation_factor) : '',
    max_attempts: p?.max_attempts === null || p === undefined ? '' : String(p.max_attempts),
    max_interval: p?.max_interval ?? '',
    on_max_attempts: p?.on_max_attempts ?? 'Pause',
  };
}

/** What changed between the settings shown and the draft, as a PATCH body. */
function patchOf(before: Draft, after: Draft): ServicePatch {
  const patch: ServicePatch = {};
  if (after.public !== before.public) patch.public = after.public;
  for (const [k] of DURATIONS)
    if (after.durations[k] !== before.durations[k] && after.durations[k]) patch[k] = after.durations[k];
  const retry: NonNullable<ServicePatch['retry_policy']> = {};
  if (after.initial_interval !== before.initial_interval) retry.initial_interval = after.initial_interval;
  if (after.max_interval !== before.max_interval) retry.max_interval = after.max_interval;
  if (after.exponentiation_factor !== before.exponentiation_factor)
    retry.exponentiation_factor = Number(after.exponentiation_factor);
  if (after.max_attempts !== before.max_attempts)
    retry.max_attempts = after.max_attempts.trim() === '' ? null : Number(after.max_attempts);
  if (after.on_max_attempts !== before.on_max_attempts) retry.on_max_attempts = after.on_max_attempts;
  if (Object.keys(retry).length > 0) patch.retry_policy = retry;
  return patch;
}

export function Settings({ service, onSaved }: { service: ServiceDetails; onSaved: (s: ServiceDetails) => void }) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(draftOf(service));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const shown = draftOf(service);
  const d = editing ? draft : shown;
  const set = (change: Partial<Draft>) => setDraft((prev) => ({ ...prev, ...change }));
  const durations = DURATIONS.filter(
    ([k]) =>
      (k !== 'workflow_completion_retention' || service.ty === 'Workflow') &&
      (k !== 'state_ttl' || service.ty !== 'Service'),
  );

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSaved(await modifyService(service.name, patchOf(shown, draft)));
      setEditing(false);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const input = (value: string, onInput: (v: string) => void, name: string, placeholder = '') =>
    editing ? (
      <input name={name} value={value} placeholder={placeholder} onInput={(e) => onInput(e.currentTarget.value)} />
    ) : (
      <span class="mono">{value || '—'}</span>
    );
  const number = (
    name: 'exponentiation_factor' | 'max_attempts',
    shown: string,
    attrs: { step?: string; placeholder?: string },
  ) =>
    editing ? (
      <input
        name={name}
        type="number"
        min="1"
        {...attrs}
        value={d[name]}
        onInput={(e) => set({ [name]: e.currentTarget.value })}
      />
    ) : (
      <span class="mono">{shown}</span>
    );

  return (
    <form class="card" id="settings" aria-label="service settings" onSubmit={save}>
      <div class="row" style={{ justifyContent: 'space-between' }}>
        <h2 style={{ margin: 0 }}>Settings</h2>
        {!editing && (
          <button type="button" onClick={() => (setDraft(shown), setError(undefined), setEditing(true))}>
            Edit
          </button>
        )}
      </div>
      <div class="grid cols-2" style={{ marginTop: '10px' }}>
        <dl class="kv settings">
          <dt>Deployment</dt>
          <dd class="mono">
            <a href="/ui/deployments">{service.deployment_id}</a> (revision {service.revision})
          </dd>
          <dt>Ingress</dt>
          <dd>
            {editing ? (
              <label class="check">
                <input type="checkbox" name="public" checked={d.public} onChange={() => set({ public: !d.public })} />{' '}
                public (callable through the ingress)
              </label>
            ) : d.public ? (
              'public'
            ) : (
              'private: only other services call it'
            )}
          </dd>
          {durations.map(([k, label, help]) => [
            <dt key={`${k}t`} title={help}>
              {label}
            </dt>,
            <dd key={`${k}d`}>
              {input(
                d.durations[k] ?? '',
                (v) => set({ durations: { ...draft.durations, [k]: v } }),
                k,
                'e.g. 1h, 30s',
              )}
            </dd>,
          ])}
        </dl>
        <dl class="kv settings">
          <dt>Retries start after</dt>
          <dd>{input(d.initial_interval, (v) => set({ initial_interval: v }), 'initial_interval')}</dd>
          <dt>Growing by</dt>
          <dd>{number('exponentiation_factor', `×${d.exponentiation_factor}`, { step: '0.1' })}</dd>
          <dt>Up to</dt>
          <dd>{input(d.max_interval, (v) => set({ max_interval: v }), 'max_interval')}</dd>
          <dt>Attempts</dt>
          <dd>{number('max_attempts', d.max_attempts || 'no limit', { placeholder: 'no limit' })}</dd>
          <dt>Then</dt>
          <dd>
            {editing ? (
              <select
                name="on_max_attempts"
                value={d.on_max_attempts}
                onChange={(e) => set({ on_max_attempts: e.currentTarget.value as 'Pause' | 'Kill' })}
              >
                <option value="Pause">pause the invocation</option>
                <option value="Kill">kill the invocation</option>
              </select>
            ) : d.on_max_attempts === 'Kill' ? (
              'kill the invocation'
            ) : (
              'pause the invocation'
            )}
          </dd>
        </dl>
      </div>
      {editing && (
        <>
          <p class="muted small">
            New invocations get these settings; running ones keep the retry policy they started with. A forced
            re-registration of the deployment resets them.
          </p>
          <ErrorBox error={error} />
          <div class="row" style={{ marginTop: '10px' }}>
            <span class="spacer" />
            <button type="button" onClick={() => setEditing(false)}>
              Discard
            </button>
            <button class="primary" type="submit" disabled={busy}>
              {busy ? 'Saving…' : 'Save settings'}
            </button>
          </div>
        </>
      )}
    </form>
  );
}
