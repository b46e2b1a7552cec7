/**
 * The keys of a virtual object (each with its lock holder, inbox, state and invocations) or
 * the runs of a workflow (each with its status, duration and promises), live; a filter on the
 * key is part of the address (`?key=`).
 */
import { useLocation } from 'preact-iso';
import { getService } from '../api/admin';
import { objectKeys, workflowRuns, type KeySummary, type WorkflowRun } from '../api/keys';
import type { LiveChange } from '../api/live';
import { Ago, Elapsed } from '../components/Ago';
import { ErrorBox } from '../components/ErrorBox';
import { toMs } from '../format';
import { useLoad } from '../hooks/use-load';
import { ServiceHead } from '../service/ServiceHead';

const keyHref = (service: string, key: string) =>
  `/ui/objects/${encodeURIComponent(service)}/${encodeURIComponent(key)}`;

function KeysTable({ service, keys }: { service: string; keys: KeySummary[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Key</th>
          <th>Lock</th>
          <th class="num">Inbox</th>
          <th class="num">State entries</th>
          <th class="num">Invocations</th>
          <th>Last invoked</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((k) => (
          <tr key={k.key} data-key={k.key}>
            <td class="mono">
              <a href={keyHref(service, k.key)}>{k.key}</a>
            </td>
            <td>
              {k.holder ? (
                <a class="mono small" href={`/ui/invocations/${k.holder}`}>
                  held by {k.holder}
                </a>
              ) : (
                <span class="badge s-succeeded">free</span>
              )}
            </td>
            <td class="num">{k.inbox}</td>
            <td class="num">{k.stateEntries}</td>
            <td class="num">
              <a href={`/ui/invocations?service=${encodeURIComponent(service)}&key=${encodeURIComponent(k.key)}`}>
                {k.invocations}
              </a>
              {k.inFlight > 0 && <span class="muted small"> ({k.inFlight} in flight)</span>}
            </td>
            <td class="small">{k.lastCreated ? <Ago at={k.lastCreated} /> : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function RunsTable({ service, runs }: { service: string; runs: WorkflowRun[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Workflow id</th>
          <th>Run</th>
          <th>Status</th>
          <th>Started</th>
          <th class="num">Duration</th>
          <th class="num">Promises resolved</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((r) => (
          <tr key={r.id} data-key={r.key}>
            <td class="mono">
              <a href={keyHref(service, r.key)}>{r.key}</a>
            </td>
            <td class="mono small">
              <a href={`/ui/invocations/${r.id}`}>{r.id}</a>
            </td>
            <td>
              <span class={`badge s-${r.shown}`}>{r.shown}</span>
            </td>
            <td class="small">
              <Ago at={r.created_at} />
            </td>
            <td class="num">
              <Elapsed since={toMs(r.created_at)} until={toMs(r.completed_at)} />
            </td>
            <td class="num">
              {r.promisesDone} / {r.promises}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ServiceKeys({ name }: { name: string }) {
  const { query: q, route, path } = useLocation();
  const filter = q.key ?? '';
  const service = useLoad(() => getService(name), [name]);
  const ty = service.data?.ty;
  const runHandler = service.data?.handlers.find((h) => h.ty === 'Workflow')?.name;
  const mine = (c: LiveChange) =>
    c.invocations.some((i) => i.target?.service === name) ||
    c.objects.some((o) => o.service === name) ||
    c.state.some((s) => s.service === name) ||
    c.promises.some((p) => p.service === name) ||
    c.deleted.length > 0;
  const data = useLoad(
    async () =>
      ty === 'Workflow'
        ? { runs: await workflowRuns(name, runHandler ?? 'run') }
        : ty === 'VirtualObject'
          ? { keys: await objectKeys(name) }
          : {},
    [name, ty, runHandler],
    { staleOn: mine },
  );
  const matches = (key: string) => key.includes(filter);
  const keys = data.data?.keys?.filter((k) => matches(k.key));
  const runs = data.data?.runs?.filter((r) => matches(r.key));
  const count = keys?.length ?? runs?.length;
  return (
    <div class="stack">
      <ServiceHead name={name} ty={ty} />
      <ErrorBox error={service.error ?? data.error} />
      <div class="card" id="keys">
        <div class="row" style={{ marginBottom: '10px' }}>
          <label class="field" style={{ flexDirection: 'row', alignItems: 'center', gap: '8px' }}>
            {ty === 'Workflow' ? 'Workflow id' : 'Key'} contains
            <input
              name="key"
              value={filter}
              placeholder="any"
              onChange={(e) =>
                route(
                  `${path}${e.currentTarget.value ? `?key=${encodeURIComponent(e.currentTarget.value)}` : ''}`,
                  true,
                )
              }
            />
          </label>
          <span class="muted small">
            {count === undefined
              ? 'loading…'
              : `${count} ${ty === 'Workflow' ? 'run' : 'key'}${count === 1 ? '' : 's'}`}
          </span>
        </div>
        {service.data && ty === 'Service' && <div class="empty">A plain service has no keys.</div>}
        {keys && <KeysTable service={name} keys={keys} />}
        {runs && <RunsTable service={name} runs={runs} />}
        {count === 0 && <div class="empty">{ty === 'Workflow' ? 'No runs' : 'No keys'} yet.</div>}
      </div>
    </div>
  );
}
