/**
 * Deployments: the list (sys_deployment), registering an endpoint by its URI (discovery
 * errors shown as the server words them) and removing one.
 */
import { useState } from 'preact/hooks';
import { registerDeployment, removeDeployment } from '../api/admin';
import { query } from '../api/query';
import { ConfirmButton } from '../components/Confirm';
import { ErrorBox } from '../components/ErrorBox';
import { Ago } from '../components/Ago';
import { useLoad } from '../hooks/use-load';

interface DeploymentRow {
  id: string;
  endpoint: string;
  created_at: string;
  services?: string[];
  min_service_protocol_version?: number;
  max_service_protocol_version?: number;
}

function RegisterForm({ onRegistered }: { onRegistered: () => void }) {
  const [uri, setUri] = useState('http://localhost:9080');
  const [http11, setHttp11] = useState(false);
  const [force, setForce] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      const d = await registerDeployment({
        uri,
        ...(http11 ? { use_http_11: true } : {}),
        ...(force ? { force: true } : {}),
      });
      setDone(`Registered ${d.id}: ${d.services.map((s) => s.name).join(', ') || 'no services'}`);
      onRegistered();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-label="register a deployment">
      <h2>Register a deployment</h2>
      <p class="muted small">The server asks the endpoint which services it serves (discovery) and registers them.</p>
      <div class="row">
        <input
          name="uri"
          style={{ flex: '1', minWidth: '260px' }}
          value={uri}
          onInput={(e) => setUri(e.currentTarget.value)}
          aria-label="endpoint URI"
        />
        <label class="check">
          <input type="checkbox" name="use_http_11" checked={http11} onChange={() => setHttp11(!http11)} /> HTTP/1.1
          (request/response)
        </label>
        <label class="check">
          <input type="checkbox" name="force" checked={force} onChange={() => setForce(!force)} /> force (replace an
          existing one)
        </label>
        <button class="primary" type="submit" disabled={busy}>
          {busy ? 'Discovering…' : 'Register'}
        </button>
      </div>
      {error && (
        <div class="error" style={{ marginTop: '10px' }} role="alert">
          {error}
        </div>
      )}
      {done && (
        <div class="notice" style={{ marginTop: '10px' }}>
          {done}
        </div>
      )}
    </form>
  );
}

export function Deployments() {
  const list = useLoad(
    () =>
      query<DeploymentRow>(
        'SELECT id, endpoint, created_at, services, min_service_protocol_version, max_service_protocol_version FROM sys_deployment ORDER BY created_at DESC',
      ),
    [],
  );
  return (
    <div class="stack">
      <div class="page-head">
        <h1>Deployments</h1>
        <span class="sub">{list.data ? `${list.data.length} registered` : 'loading…'}</span>
      </div>
      <RegisterForm onRegistered={list.reload} />
      <ErrorBox error={list.error} />
      <div class="card">
        <table>
          <thead>
            <tr>
              <th>Deployment</th>
              <th>Endpoint</th>
              <th>Services</th>
              <th>Protocol</th>
              <th>Registered</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {(list.data ?? []).map((d) => (
              <tr key={d.id} data-id={d.id}>
                <td class="mono small">{d.id}</td>
                <td class="mono">{d.endpoint}</td>
                <td>
                  {(d.services ?? []).map((s, i) => (
                    <span key={s}>
                      {i > 0 && ', '}
                      <a href={`/ui/services/${encodeURIComponent(s)}`}>{s}</a>
                    </span>
                  ))}
                </td>
                <td class="small">
                  v{d.min_service_protocol_version}–v{d.max_service_protocol_version}
                </td>
                <td>
                  <Ago at={d.created_at} />
                </td>
                <td>
                  <ConfirmButton
                    label="Remove"
                    danger
                    title="Remove this deployment?"
                    message={
                      <p>
                        <span class="mono">{d.endpoint}</span> and its services are unregistered (forced: invocations
                        still running on it fail their next attempt).
                      </p>
                    }
                    confirmLabel="Remove"
                    onConfirm={async () => {
                      await removeDeployment(d.id);
                      list.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.data?.length === 0 && (
          <div class="empty">No deployments yet: register your service's endpoint above.</div>
        )}
      </div>
    </div>
  );
}
