/** Every registered service, from sys_service. */
import { query } from '../api/query';
import { ErrorBox } from '../components/ErrorBox';
import { useLoad } from '../hooks/use-load';

interface ServiceRow {
  name: string;
  ty: string;
  revision: number;
  deployment_id: string;
  public: boolean;
}

const TYPE_LABEL: Record<string, string> = {
  service: 'Service',
  virtual_object: 'Virtual object',
  workflow: 'Workflow',
};

export function Services() {
  const services = useLoad(
    () => query<ServiceRow>('SELECT name, ty, revision, deployment_id, public FROM sys_service ORDER BY name'),
    [],
  );
  return (
    <div class="stack">
      <div class="page-head">
        <h1>Services</h1>
        <span class="sub">{services.data ? `${services.data.length} registered` : 'loading…'}</span>
        <span class="spacer" />
        <a class="btn" href="/ui/deployments">
          Register a deployment
        </a>
      </div>
      <ErrorBox error={services.error} />
      <div class="card">
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Type</th>
              <th>Revision</th>
              <th>Deployment</th>
              <th>Ingress</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {(services.data ?? []).map((s) => (
              <tr key={s.name}>
                <td>
                  <a href={`/ui/services/${encodeURIComponent(s.name)}`}>
                    <strong>{s.name}</strong>
                  </a>
                </td>
                <td>{TYPE_LABEL[s.ty] ?? s.ty}</td>
                <td class="num">{s.revision}</td>
                <td class="mono small">{s.deployment_id}</td>
                <td>{s.public ? 'public' : 'private'}</td>
                <td class="small">
                  {s.ty !== 'service' && (
                    <>
                      <a href={`/ui/services/${encodeURIComponent(s.name)}/keys`}>
                        {s.ty === 'workflow' ? 'runs' : 'keys'}
                      </a>{' '}
                      · <a href={`/ui/services/${encodeURIComponent(s.name)}/state`}>state</a>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {services.data?.length === 0 && (
          <div class="empty">
            No services yet: <a href="/ui/deployments">register a deployment</a>.
          </div>
        )}
      </div>
    </div>
  );
}
