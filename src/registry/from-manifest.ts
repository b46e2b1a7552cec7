/**
 * Turns a discovered manifest into service revisions with the reference's defaults filled in
 * (service-protocol.md §3 "Defaults", §15 for request-response deployments).
 */
import type { EndpointManifest, ManifestHandler, ManifestOptions, ManifestService } from '../protocol/manifest.js';
import {
  registryDefaults,
  type HandlerMeta,
  type HandlerType,
  type RetryPolicy,
  type ServiceMeta,
  type ServiceType,
} from './types.js';

const SERVICE_TYPES: Record<ManifestService['ty'], ServiceType> = {
  SERVICE: 'Service',
  VIRTUAL_OBJECT: 'VirtualObject',
  WORKFLOW: 'Workflow',
};

const HANDLER_TYPES: Record<NonNullable<ManifestHandler['ty']>, HandlerType> = {
  EXCLUSIVE: 'Exclusive',
  SHARED: 'Shared',
  WORKFLOW: 'Workflow',
};

export function serviceTypeOf(ty: ManifestService['ty']): ServiceType {
  return SERVICE_TYPES[ty];
}

function handlerType(serviceTy: ServiceType, ty: ManifestHandler['ty']): HandlerType | undefined {
  if (serviceTy === 'Service') return undefined;
  if (ty !== undefined) return HANDLER_TYPES[ty];
  // An object's handlers are exclusive unless marked shared; a workflow's extra handlers are shared.
  return serviceTy === 'VirtualObject' ? 'Exclusive' : 'Shared';
}

/** The retry-policy fields a manifest set, by our names. */
function retryOverrides(o: ManifestOptions): Partial<RetryPolicy> {
  const p: Partial<RetryPolicy> = {};
  if (o.retryPolicyInitialInterval !== undefined) p.initialInterval = o.retryPolicyInitialInterval;
  if (o.retryPolicyExponentiationFactor !== undefined) p.exponentiationFactor = o.retryPolicyExponentiationFactor;
  if (o.retryPolicyMaxAttempts !== undefined) p.maxAttempts = o.retryPolicyMaxAttempts;
  if (o.retryPolicyMaxInterval !== undefined) p.maxInterval = o.retryPolicyMaxInterval;
  if (o.retryPolicyOnMaxAttempts !== undefined)
    p.onMaxAttempts = o.retryPolicyOnMaxAttempts === 'KILL' ? 'Kill' : 'Pause';
  return p;
}

function toHandler(serviceTy: ServiceType, h: ManifestHandler): HandlerMeta {
  const meta: HandlerMeta = {
    name: h.name,
    public: h.ingressPrivate !== true,
    // A handler that declares no input takes anything; one that declares no output answers JSON (as Restate reads them).
    input: h.input === undefined ? { required: false, contentType: '*/*' } : { required: h.input.required ?? false },
    output:
      h.output === undefined
        ? { contentType: 'application/json', setContentTypeIfEmpty: false }
        : { setContentTypeIfEmpty: h.output.setContentTypeIfEmpty ?? false },
  };
  const ty = handlerType(serviceTy, h.ty);
  if (ty !== undefined) meta.ty = ty;
  if (h.input?.contentType !== undefined) meta.input.contentType = h.input.contentType;
  if (h.input?.jsonSchema !== undefined) meta.input.jsonSchema = h.input.jsonSchema;
  if (h.output?.contentType !== undefined) meta.output.contentType = h.output.contentType;
  if (h.output?.jsonSchema !== undefined) meta.output.jsonSchema = h.output.jsonSchema;
  if (h.documentation !== undefined) meta.documentation = h.documentation;
  if (h.metadata !== undefined) meta.metadata = h.metadata;
  if (h.abortTimeout !== undefined) meta.abortTimeout = h.abortTimeout;
  if (h.inactivityTimeout !== undefined) meta.inactivityTimeout = h.inactivityTimeout;
  if (h.journalRetention !== undefined) meta.journalRetention = h.journalRetention;
  if (h.idempotencyRetention !== undefined) meta.idempotencyRetention = h.idempotencyRetention;
  if (h.workflowCompletionRetention !== undefined && ty === 'Workflow')
    meta.workflowCompletionRetention = h.workflowCompletionRetention;
  if (h.enableLazyState !== undefined) meta.enableLazyState = h.enableLazyState;
  const retry = retryOverrides(h);
  if (Object.keys(retry).length > 0) meta.retryPolicy = retry;
  return meta;
}

export interface BuildContext {
  deploymentId: string;
  /** Revision per service name, decided by the registry. */
  revisionOf: (name: string) => number;
}

/** One ServiceMeta per manifest service, in manifest order. */
export function servicesFromManifest(manifest: EndpointManifest, ctx: BuildContext): ServiceMeta[] {
  const requestResponse = manifest.protocolMode === 'REQUEST_RESPONSE';
  return manifest.services.map((s) => {
    const ty = serviceTypeOf(s.ty);
    const meta: ServiceMeta = {
      name: s.name,
      ty,
      handlers: s.handlers.map((h) => toHandler(ty, h)),
      deploymentId: ctx.deploymentId,
      revision: ctx.revisionOf(s.name),
      public: s.ingressPrivate !== true,
      idempotencyRetention: s.idempotencyRetention ?? registryDefaults.retention,
      journalRetention: s.journalRetention ?? registryDefaults.retention,
      // §15: the server cannot ask a request-response endpoint to suspend mid-stream.
      inactivityTimeout:
        s.inactivityTimeout ??
        (requestResponse ? registryDefaults.requestResponseInactivityTimeout : registryDefaults.inactivityTimeout),
      abortTimeout: s.abortTimeout ?? registryDefaults.abortTimeout,
      enableLazyState: s.enableLazyState ?? false,
      retryPolicy: { ...registryDefaults.retryPolicy, ...retryOverrides(s) },
    };
    if (ty === 'Workflow') {
      // The manifest carries it on the workflow's main handler only; the admin API shows it per service.
      const main = s.handlers.find((h) => h.ty === 'WORKFLOW');
      meta.workflowCompletionRetention = main?.workflowCompletionRetention ?? registryDefaults.retention;
    }
    if (s.documentation !== undefined) meta.documentation = s.documentation;
    if (s.metadata !== undefined) meta.metadata = s.metadata;
    return meta;
  });
}
