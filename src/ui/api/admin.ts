/**
 * The admin API calls the pages make (reference-behavior.md §3): the same endpoints the
 * `restate` CLI uses.
 */
import { request } from './http';

export interface ServiceHandler {
  name: string;
  ty?: 'Exclusive' | 'Shared' | 'Workflow' | null;
  input_description?: string;
  output_description?: string;
  input_json_schema?: unknown;
  output_json_schema?: unknown;
  documentation?: string;
  public?: boolean;
}

/** `GET /services/{name}`: the fields the pages show. */
export interface ServiceDetails {
  name: string;
  ty: 'Service' | 'VirtualObject' | 'Workflow';
  revision: number;
  deployment_id: string;
  public: boolean;
  handlers: ServiceHandler[];
  idempotency_retention?: string | null;
  journal_retention?: string | null;
  workflow_completion_retention?: string | null;
  inactivity_timeout?: string | null;
  abort_timeout?: string | null;
  /** redstate's own: virtual objects and workflows. */
  state_ttl?: string | null;
  retry_policy?: {
    initial_interval: string;
    exponentiation_factor: number;
    max_attempts: number | null;
    max_interval: string;
    on_max_attempts: 'Pause' | 'Kill';
  };
  documentation?: string | null;
  [field: string]: unknown;
}

export const getService = (name: string) => request<ServiceDetails>('GET', `/services/${encodeURIComponent(name)}`);

/**
 * `PATCH /services/{name}` (reference-behavior.md §3.4): the settings given change, durations
 * in the friendly or ISO 8601 form; `retry_policy` and `state_ttl` are redstate's own.
 */
export interface ServicePatch {
  public?: boolean;
  idempotency_retention?: string;
  journal_retention?: string;
  workflow_completion_retention?: string;
  inactivity_timeout?: string;
  abort_timeout?: string;
  state_ttl?: string;
  retry_policy?: {
    initial_interval?: string;
    exponentiation_factor?: number;
    max_attempts?: number | null;
    max_interval?: string;
    on_max_attempts?: 'Pause' | 'Kill';
  };
}

export const modifyService = (name: string, patch: ServicePatch) =>
  request<ServiceDetails>('PATCH', `/services/${encodeURIComponent(name)}`, patch);

export const getServiceOpenApi = (name: string) =>
  request<OpenApiDocument>('GET', `/services/${encodeURIComponent(name)}/openapi`);

export interface OpenApiDocument {
  paths?: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content?: Record<string, { schema?: unknown }> };
        responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
      }
    >
  >;
  components?: { schemas?: Record<string, unknown> };
}

export interface RegisterDeployment {
  uri: string;
  use_http_11?: boolean;
  force?: boolean;
}

export const registerDeployment = (body: RegisterDeployment) =>
  request<{ id: string; services: Array<{ name: string }> }>('POST', '/deployments', body);

export const removeDeployment = (id: string) =>
  request<void>('DELETE', `/deployments/${encodeURIComponent(id)}?force=true`);

export type InvocationAction = 'cancel' | 'kill' | 'pause' | 'resume' | 'purge' | 'restart-as-new';

export const invocationAction = (id: string, action: InvocationAction) =>
  request<{ new_invocation_id?: string } | undefined>('PATCH', `/invocations/${encodeURIComponent(id)}/${action}`);

/**
 * `POST /services/{name}/state`: replaces the key's whole state if it still has `version`.
 * A value is text (stored as its UTF-8 bytes) or an array of bytes.
 */
export const setObjectState = (
  service: string,
  key: string,
  state: Record<string, string | number[]>,
  version: string,
) =>
  request<void>('POST', `/services/${encodeURIComponent(service)}/state`, {
    object_key: key,
    new_state: state,
    version,
  });
