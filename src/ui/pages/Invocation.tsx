/**
 * One invocation: its machine with the live current state and the path it took, its journal,
 * its last failure, where it sits in the call tree, and the operator's actions.
 */
import { getInvocation, type InvocationRow } from '../api/invocations';
import { query, sqlString } from '../api/query';
import { ErrorBox } from '../components/ErrorBox';
import { StatusBadge } from '../components/StatusBadge';
import { ago, formatTime } from '../format';
import { useLoad } from '../hooks/use-load';
import type { LiveChange } from '../api/live';
import { Actions } from '../invocation/Actions';
import { Journal } from '../invocation/Journal';
import { loadJournal } from '../invocation/journal-entries';
import { PathView } from '../invocation/PathView';
import { useHistory } from '../invocation/use-history';

const objectHref = (service: string, key: string) => `/ui/objects/${encodeURIComponent(service)}/${encodeURIComponent(key)}`;

/** The last failed attempt (sys_journal_events), kept also once the invocation completed. */
interface AttemptFailure {
  error_code?: number;
  error_message?: string;
  error_stacktrace?: string;
  related_command_name?: string;
  restate_doc_error_code?: string;
}

async function lastAttemptFailure(id: string): Promise<AttemptFailure | undefined> {
  const rows = await query<{ event_json: string }>(`SELECT event_json FROM sys_journal_events WHERE id = ${sqlString(id)} AND event_type = 'TransientError'`);
  return rows[0] ? (JSON.parse(rows[0].event_json) as AttemptFailure) : undefined;
}

/** `retries`: sys_invocation has none for completed invocations; the history still knows. */
function Details({ inv, retries }: { inv: InvocationRow; retries: number | undefined }) {
  const rows: Array<[string, preact.ComponentChildren]> = [
    ['Target', inv.target],
    ['Service type', inv.target_service_ty],
    ['Created', `${formatTime(inv.created_at)} (${ago(inv.created_at)})`],
    ['Modified', formatTime(inv.modified_at)],
    ['Retries', inv.retry_count ?? retries ?? '—'],
    ['Journal entries', inv.journal_size ?? 0],
    ['Idempotency key', inv.idempotency_key ?? '—'],
    ['Deployment', inv.pinned_deployment_id ? <a href="/ui/deployments">{inv.pinned_deployment_id}</a> : '—'],
  ];
  if (inv.scheduled_start_at) rows.push(['Scheduled start', formatTime(inv.scheduled_start_at)]);
  if (inv.next_retry_at) rows.push(['Next retry', formatTime(inv.next_retry_at)]);
  return (
    <dl class="kv">
      {rows.map(([k, v]) => [<dt key={`${k}t`}>{k}</dt>, <dd key={`${k}d`}>{v}</dd>])}
    </dl>
  );
}

function CallTree({ inv, callees }: { inv: InvocationRow; callees: Array<{ id: string; target: string }> }) {
  return (
    <div class="card">
      <h2>Call tree</h2>
      <dl class="kv">
        <dt>Invoked by</dt>
        <dd>
          {inv.invoked_by_id ? (
            <>
              <a class="mono" href={`/ui/invocations/${inv.invoked_by_id}`}>{inv.invoked_by_id}</a> {inv.invoked_by_target && <span class="muted">({inv.invoked_by_target})</span>}
            </>
          ) : (
            inv.invoked_by
          )}
        </dd>
        {inv.restarted_from && (
          <>
            <dt>Restarted from</dt>
            <dd>
              <a class="mono" href={`/ui/invocations/${inv.restarted_from}`}>{inv.restarted_from}</a>
            </dd>
          </>
        )}
        <dt>Calls</dt>
        <dd>
          {callees.length === 0
            ? 'none'
            : callees.map((c) => (
                <div key={c.id}>
                  <a class="mono" href={`/ui/invocations/${c.id}`}>{c.id}</a> <span class="muted">{c.target}</span>
                </div>
              ))}
        </dd>
        {inv.target_service_key !== undefined && (
          <>
            <dt>{inv.target_service_ty === 'workflow' ? 'Workflow id' : 'Object key'}</dt>
            <dd>
              <a href={objectHref(inv.target_service_name, inv.target_service_key)}>
                {inv.target_service_name}/{inv.target_service_key}
              </a>{' '}
              <span class="muted small">lock, inbox and state</span>
            </dd>
          </>
        )}
      </dl>
    </div>
  );
}

function Failure({ inv, attempt }: { inv: InvocationRow; attempt: AttemptFailure | undefined }) {
  if (!inv.completion_failure && !attempt) return null;
  return (
    <div class="card" id="failure">
      <h2>{inv.completion_failure ? 'Failure' : 'Last failed attempt'}</h2>
      {inv.completion_failure && <p class="error">{inv.completion_failure}</p>}
      {attempt && (
        <>
          {inv.completion_failure && <h3>Last failed attempt</h3>}
          <p class="error">
            [{attempt.error_code ?? '?'}] {attempt.error_message}
          </p>
          <p class="small muted">
            {attempt.restate_doc_error_code}
            {attempt.related_command_name !== undefined && ` · at command “${attempt.related_command_name}”`}
            {inv.retry_count !== undefined && ` · ${inv.retry_count} retries so far`}
          </p>
          {attempt.error_stacktrace && (
            <details open>
              <summary>Stack trace</summary>
              <pre class="stacktrace">{attempt.error_stacktrace}</pre>
            </details>
          )}
        </>
      )}
    </div>
  );
}

/** The state of the invocation's object / workflow key as it is now (not as the attempt saw it). */
function KeyState({ inv }: { inv: InvocationRow }) {
  const service = inv.target_service_name;
  const key = inv.target_service_key!;
  const state = useLoad(
    () => query<{ key: string; value_utf8?: string }>(`SELECT key, value_utf8 FROM state WHERE service_name = ${sqlString(service)} AND service_key = ${sqlString(key)} ORDER BY key`),
    [service, key],
    { staleOn: (c) => c.state.some((s) => s.service === service && s.key === key) },
  );
  return (
    <div class="card">
      <h2>
        State of <a href={objectHref(service, key)}>{service}/{key}</a> <span class="muted small">now</span>
      </h2>
      {state.data?.length === 0 && <div class="muted">empty</div>}
      <dl class="kv">
        {(state.data ?? []).map((s) => [
          <dt key={`${s.key}t`} class="mono">{s.key}</dt>,
          <dd key={`${s.key}d`} class="mono">{s.value_utf8 ?? '(binary)'}</dd>,
        ])}
      </dl>
    </div>
  );
}

export function Invocation({ id }: { id: string }) {
  const mine = (c: LiveChange) => c.invocations.some((i) => i.id === id) || c.deleted.includes(id);
  const inv = useLoad(() => getInvocation(id), [id], { staleOn: mine });
  const journal = useLoad(() => loadJournal(id), [id], { staleOn: mine });
  const failure = useLoad(() => lastAttemptFailure(id), [id], { staleOn: mine });
  const { history, error } = useHistory(id);
  const row = inv.data;

  if (inv.data === undefined && !inv.loading && !inv.error) {
    return (
      <div class="stack">
        <h1>Invocation not found</h1>
        <p class="muted mono">{id}</p>
        <p>It may have been purged after its retention. <a href="/ui/invocations">All invocations</a></p>
      </div>
    );
  }
  const callees = (journal.data ?? []).filter((e) => e.invokedId).map((e) => ({ id: e.invokedId!, target: e.invokedTarget ?? '' }));
  return (
    <div class="stack">
      <div class="page-head">
        <h1 class="mono">{id}</h1>
        {row && <StatusBadge status={row.status} result={row.completion_result} />}
        <span class="spacer" />
        {row && <Actions id={id} status={row.status} onDone={inv.reload} />}
      </div>
      {row && <div class="sub muted" style={{ marginTop: '-12px' }}>{row.target}</div>}
      <ErrorBox error={inv.error ?? error ?? journal.error} />
      {history && <PathView history={history} />}
      <div class="grid detail">
        <div class="card" id="journal">
          <h2>Journal</h2>
          {journal.data && <Journal items={journal.data} />}
        </div>
        <div class="stack">
          {row && <Failure inv={row} attempt={failure.data} />}
          {row && <CallTree inv={row} callees={callees} />}
          {row?.target_service_key !== undefined && row.target_service_ty !== 'service' && <KeyState inv={row} />}
          {row && (
            <div class="card">
              <h2>Details</h2>
              <Details inv={row} retries={history?.at(-1)?.attempt} />
            </div>
          )}
        </div>
      </div>
    </div>
  );
}
