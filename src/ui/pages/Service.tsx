/**
 * One service: its handlers' health over the last hour, its settings (editable), and each
 * handler with its input and output schema (from the service's OpenAPI document) and a
 * playground to call it. Keys / runs and state across keys are the tabs beside it.
 */
import { useEffect, useState } from 'preact/hooks';
import {
  getService,
  getServiceOpenApi,
  type OpenApiDocument,
  type ServiceDetails,
  type ServiceHandler,
} from '../api/admin';
import { handlerHealth } from '../api/health';
import { ErrorBox } from '../components/ErrorBox';
import { HealthTable } from '../components/HealthTable';
import { useLoad } from '../hooks/use-load';
import { Playground } from '../service/Playground';
import { ServiceHead } from '../service/ServiceHead';
import { Settings } from '../service/Settings';

function schemasOf(
  doc: OpenApiDocument | undefined,
  service: ServiceDetails,
  handler: string,
): { input?: unknown; output?: unknown } {
  const key = service.ty === 'Service' ? '' : '/{key}';
  const op = doc?.paths?.[`/restate/call/${service.name}${key}/${handler}`]?.post;
  const first = (content: Record<string, { schema?: unknown }> | undefined) =>
    content ? Object.values(content)[0]?.schema : undefined;
  return { input: first(op?.requestBody?.content), output: first(op?.responses?.['200']?.content) };
}

function Schema({ label, description, schema }: { label: string; description: string | undefined; schema: unknown }) {
  return (
    <div>
      <div class="muted small">
        {label}: <span class="mono">{description ?? 'none'}</span>
      </div>
      {schema !== undefined && (
        <details class="schema">
          <summary class="small">JSON schema</summary>
          <pre class="value">{JSON.stringify(schema, null, 2)}</pre>
        </details>
      )}
    </div>
  );
}

function Handler({
  service,
  handler,
  doc,
}: {
  service: ServiceDetails;
  handler: ServiceHandler;
  doc: OpenApiDocument | undefined;
}) {
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

export function Service({ name }: { name: string }) {
  const loaded = useLoad(() => getService(name), [name]);
  const openapi = useLoad(() => getServiceOpenApi(name), [name]);
  const health = useLoad(() => handlerHealth(Date.now(), name), [name], {
    staleOn: (c) => c.invocations.some((i) => i.target?.service === name && i.status !== undefined),
  });
  // A save answers with the service as it is now: shown without another request.
  const [saved, setSaved] = useState<ServiceDetails>();
  useEffect(() => setSaved(undefined), [loaded.data]);
  const s = saved ?? loaded.data;
  return (
    <div class="stack">
      <ServiceHead name={name} ty={s?.ty} />
      <ErrorBox error={loaded.error ?? health.error} />
      <div class="card" id="health">
        <h2>Handlers, last hour</h2>
        {health.data && <HealthTable rows={health.data} showService={false} />}
      </div>
      {s && <Settings service={s} onSaved={setSaved} />}
      {s?.handlers.map((h) => (
        <Handler key={h.name} service={s} handler={h} doc={openapi.data} />
      ))}
    </div>
  );
}
