/**
 * One service: type, deployment, revision, settings, and each handler with its input and
 * output schema (from the service's OpenAPI document) and a playground to call it.
 */
import { getService, getServiceOpenApi, type OpenApiDocument, type ServiceDetails, type ServiceHandler } from '../api/admin';
import { ErrorBox } from '../components/ErrorBox';
import { useLoad } from '../hooks/use-load';
import { Playground } from '../service/Playground';

function schemasOf(doc: OpenApiDocument | undefined, service: ServiceDetails, handler: string): { input?: unknown; output?: unknown } {
  const key = service.ty === 'Service' ? '' : '/{key}';
  const op = doc?.paths?.[`/restate/call/${service.name}${key}/${handler}`]?.post;
  const first = (content: Record<string, { schema?: unknown }> | undefined) => (content ? Object.values(content)[0]?.schema : undefined);
  return { input: first(op?.requestBody?.content), output: first(op?.responses?.['200']?.content) };
}

function Schema({ label, description, schema }: { label: string; description: string | undefined; schema: unknown }) {
  return (
    <div>
      <div class="muted small">
        {label}: <span class="mono">{description ?? 'none'}</span>
      </div>
      {schema !== undefined && <pre class="value">{JSON.stringify(schema, null, 2)}</pre>}
    </div>
  );
}

function Handler({ service, handler, doc }: { service: ServiceDetails; handler: ServiceHandler; doc: OpenApiDocument | undefined }) {
  const schemas = schemasOf(doc, service, handler.name);
  return (
    <div class="card" id={`handler-${handler.name}`}>
      <div class="row">
        <h2 style={{ margin: 0 }}>{handler.name}</h2>
        {handler.ty && <span class="badge">{handler.ty.toLowerCase()}</span>}
        {handler.public === false && <span class="badge s-bad">private</span>}
      </div>
      {handler.documentation && <p class="muted">{handler.documentation}</p>}
      <div class="grid cols-2" style={{ margin: '10px 0' }}>
        <Schema label="Input" description={handler.input_description} schema={schemas.input} />
        <Schema label="Output" description={handler.output_description} schema={schemas.output} />
      </div>
      {service.public && handler.public !== false && <Playground service={service} handler={handler} />}
    </div>
  );
}

const SETTINGS: Array<[keyof ServiceDetails, string]> = [
  ['idempotency_retention', 'Idempotency retention'],
  ['journal_retention', 'Journal retention'],
  ['workflow_completion_retention', 'Workflow retention'],
  ['inactivity_timeout', 'Inactivity timeout'],
  ['abort_timeout', 'Abort timeout'],
];

export function Service({ name }: { name: string }) {
  const service = useLoad(() => getService(name), [name]);
  const openapi = useLoad(() => getServiceOpenApi(name), [name]);
  const s = service.data;
  return (
    <div class="stack">
      <div class="page-head">
        <h1>{name}</h1>
        {s && <span class="badge">{s.ty}</span>}
        <span class="spacer" />
        <a class="btn" href={`/ui/invocations?service=${encodeURIComponent(name)}`}>Its invocations</a>
      </div>
      <ErrorBox error={service.error} />
      {s && (
        <div class="card">
          <dl class="kv">
            <dt>Deployment</dt>
            <dd class="mono">
              <a href="/ui/deployments">{s.deployment_id}</a>
            </dd>
            <dt>Revision</dt>
            <dd>{s.revision}</dd>
            <dt>Ingress</dt>
            <dd>{s.public ? 'public' : 'private'}</dd>
            {SETTINGS.filter(([k]) => s[k] !== undefined && s[k] !== null).map(([k, label]) => [
              <dt key={`${k}t`}>{label}</dt>,
              <dd key={`${k}d`}>{String(s[k])}</dd>,
            ])}
            {s.retry_policy && (
              <>
                <dt>Retry policy</dt>
                <dd class="mono small">
                  {Object.entries(s.retry_policy)
                    .map(([k, v]) => `${k}: ${String(v)}`)
                    .join(' · ')}
                </dd>
              </>
            )}
          </dl>
        </div>
      )}
      {s?.handlers.map((h) => <Handler key={h.name} service={s} handler={h} doc={openapi.data} />)}
    </div>
  );
}
