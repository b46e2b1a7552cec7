/**
 * Registry objects in the admin API's JSON shapes: snake_case, the reference's key order,
 * durations in the friendly form, `ty` absent on plain-service handlers, handler retry
 * policies showing only their overrides (reference-behavior.md §3.3, §3.4).
 */
import { formatDuration } from '../registry/durations.js';
import { describeInput, describeOutput } from '../registry/payload-rules.js';
import type { Deployment, HandlerMeta, RetryPolicy, ServiceMeta } from '../registry/types.js';
import { JsonFloat } from './http-io.js';
import { rfc3339Nanos } from '../timestamps.js';

const optionalDuration = (ms: number | undefined) => (ms === undefined ? undefined : formatDuration(ms));
const nonEmpty = (m: Record<string, string> | undefined) => (m && Object.keys(m).length > 0 ? m : undefined);

/** `{"max_attempts":null}` when nothing is overridden; `max_attempts` is always present. */
function handlerRetryPolicy(p: Partial<RetryPolicy> | undefined) {
  return {
    initial_interval: optionalDuration(p?.initialInterval),
    exponentiation_factor: p?.exponentiationFactor === undefined ? undefined : new JsonFloat(p.exponentiationFactor),
    max_attempts: p?.maxAttempts ?? null,
    max_interval: optionalDuration(p?.maxInterval),
    on_max_attempts: p?.onMaxAttempts,
  };
}

export function handlerView(service: ServiceMeta, h: HandlerMeta) {
  return {
    name: h.name,
    ty: h.ty,
    documentation: h.documentation,
    metadata: nonEmpty(h.metadata),
    idempotency_retention: optionalDuration(h.idempotencyRetention),
    journal_retention: optionalDuration(h.journalRetention),
    inactivity_timeout: optionalDuration(h.inactivityTimeout),
    abort_timeout: optionalDuration(h.abortTimeout),
    enable_lazy_state: h.enableLazyState,
    // A private service makes all its handlers private (§3.4, PATCH public=false).
    public: service.public && h.public,
    input_description: describeInput(h.input),
    output_description: describeOutput(h.output),
    input_json_schema: h.input.jsonSchema,
    output_json_schema: h.output.jsonSchema,
    retry_policy: handlerRetryPolicy(h.retryPolicy),
    // Ours (issue 26): the handler's override, "0s" when its writes never expire.
    state_ttl: optionalDuration(h.stateTtl),
  };
}

export function serviceView(s: ServiceMeta) {
  return {
    name: s.name,
    ty: s.ty,
    handlers: s.handlers.map((h) => handlerView(s, h)),
    documentation: s.documentation,
    metadata: nonEmpty(s.metadata),
    deployment_id: s.deploymentId,
    revision: s.revision,
    public: s.public,
    idempotency_retention: formatDuration(s.idempotencyRetention),
    workflow_completion_retention: optionalDuration(s.ty === 'Workflow' ? s.workflowCompletionRetention : undefined),
    journal_retention: formatDuration(s.journalRetention),
    inactivity_timeout: formatDuration(s.inactivityTimeout),
    abort_timeout: formatDuration(s.abortTimeout),
    enable_lazy_state: s.enableLazyState,
    retry_policy: {
      initial_interval: formatDuration(s.retryPolicy.initialInterval),
      exponentiation_factor: new JsonFloat(s.retryPolicy.exponentiationFactor),
      max_attempts: s.retryPolicy.maxAttempts,
      max_interval: formatDuration(s.retryPolicy.maxInterval),
      on_max_attempts: s.retryPolicy.onMaxAttempts,
    },
    // Ours (issue 26): absent when the service's state never expires.
    state_ttl: optionalDuration(s.stateTtl),
  };
}

function deploymentHead(d: Deployment) {
  return {
    id: d.id,
    uri: d.uri,
    protocol_type: d.protocolType,
    http_version: d.httpVersion,
    additional_headers: nonEmpty(d.additionalHeaders),
    created_at: rfc3339Nanos(d.createdAt),
    min_protocol_version: d.minProtocolVersion,
    max_protocol_version: d.maxProtocolVersion,
    sdk_version: d.sdkVersion ?? null,
  };
}

/** An entry of `GET /deployments`: services as name + revision. */
export function deploymentSummaryView(d: Deployment) {
  return { ...deploymentHead(d), services: d.services.map((s) => ({ name: s.name, revision: s.revision })) };
}

/** `GET /deployments/{id}` and `PATCH /deployments/{id}`. */
export function deploymentDetailView(d: Deployment) {
  return { ...deploymentHead(d), services: d.services.map(serviceView) };
}

/** `POST /deployments`. */
export function registerResponseView(d: Deployment) {
  return {
    id: d.id,
    services: d.services.map(serviceView),
    min_protocol_version: d.minProtocolVersion,
    max_protocol_version: d.maxProtocolVersion,
    sdk_version: d.sdkVersion ?? null,
  };
}
