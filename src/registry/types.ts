/**
 * The registry's model: deployments (service endpoints found by discovery) and the service
 * revisions they expose. The invoker and the ingress read it through `Registry`
 * (registry.ts); the admin API renders it in Restate's JSON shapes (admin/views.ts).
 *
 * All durations are milliseconds.
 */

import type { RetryPolicy } from '../../machines/invocation.js';

export type ServiceType = 'Service' | 'VirtualObject' | 'Workflow';

/** Absent on the handlers of plain services (reference-behavior.md §3.3, "Enumerations"). */
export type HandlerType = 'Exclusive' | 'Shared' | 'Workflow';

/** The invocation machine owns the retry policy's shape: it is what decides retries. */
export type { RetryPolicy };

export interface HandlerMeta {
  name: string;
  /** Absent for plain services. */
  ty?: HandlerType;
  /**
   * The handler's own flag (`!ingressPrivate` in the manifest). Whether the ingress may call
   * it is `service.public && handler.public` (see `EffectiveHandler.public`).
   */
  public: boolean;
  input: { required: boolean; contentType?: string; jsonSchema?: unknown };
  output: { contentType?: string; setContentTypeIfEmpty: boolean; jsonSchema?: unknown };
  documentation?: string;
  metadata?: Record<string, string>;
  // Overrides of the service's values, present only when the manifest set them.
  abortTimeout?: number;
  inactivityTimeout?: number;
  journalRetention?: number;
  idempotencyRetention?: number;
  /** Only on a workflow's `Workflow` handler. */
  workflowCompletionRetention?: number;
  enableLazyState?: boolean;
  retryPolicy?: Partial<RetryPolicy>;
  /** Overrides the service's `stateTtl` for the state this handler writes; 0: its writes never expire. Ours, set by PATCH only. */
  stateTtl?: number;
}

/** One revision of a service, as exposed by one deployment, with the defaults filled in. */
export interface ServiceMeta {
  name: string;
  ty: ServiceType;
  handlers: HandlerMeta[];
  deploymentId: string;
  revision: number;
  public: boolean;
  idempotencyRetention: number;
  journalRetention: number;
  /** Workflows only. */
  workflowCompletionRetention?: number;
  inactivityTimeout: number;
  abortTimeout: number;
  enableLazyState: boolean;
  retryPolicy: RetryPolicy;
  documentation?: string;
  metadata?: Record<string, string>;
  /**
   * Ours (issue 26): a key whose state was not written for this long has its state cleared.
   * Virtual objects and workflows only; set by PATCH only, and kept across new revisions
   * (carryStateTtl), since no SDK can declare it.
   */
  stateTtl?: number;
}

/** A new revision keeps the state TTLs its service had: an SDK cannot declare them, so a redeploy must not drop them. */
export function carryStateTtl(next: ServiceMeta, previous: ServiceMeta | undefined): ServiceMeta {
  if (!previous || next.ty === 'Service') return next;
  const handlers = next.handlers.map((h) => {
    const before = previous.handlers.find((x) => x.name === h.name)?.stateTtl;
    return before === undefined ? h : { ...h, stateTtl: before };
  });
  return { ...next, handlers, ...(previous.stateTtl !== undefined ? { stateTtl: previous.stateTtl } : {}) };
}

export type ProtocolType = 'BidiStream' | 'RequestResponse';
export type HttpVersion = 'HTTP/2.0' | 'HTTP/1.1';

export interface Deployment {
  /** `dp_…`, 26 characters (deployment-id.ts). */
  id: string;
  /**
   * Normalised endpoint URI, always ending in `/`, so `new URL('discover', uri)` and
   * `uri + 'invoke/Svc/handler'` both work.
   */
  uri: string;
  protocolType: ProtocolType;
  httpVersion: HttpVersion;
  /** Sent with every discover/invoke request to this deployment. */
  additionalHeaders?: Record<string, string>;
  /** Epoch ms of the (last forced) registration. */
  createdAt: number;
  minProtocolVersion: number;
  maxProtocolVersion: number;
  /** The endpoint's `x-restate-server` header, e.g. `restate-sdk-typescript/1.17.2`. */
  sdkVersion?: string;
  /** The revisions this deployment serves (older ones stay listed when superseded). */
  services: ServiceMeta[];
}

/**
 * What the invoker needs to run one handler: the latest revision of its service, the
 * deployment serving that revision, and the handler's overrides merged over the service's values.
 */
export interface EffectiveHandler {
  /** The registry's generation it was resolved in (`Registry.generation`): current while they are equal. */
  generation: number;
  service: ServiceMeta;
  handler: HandlerMeta;
  deployment: Deployment;
  /** Callable through the ingress: the service and the handler are both public. */
  public: boolean;
  inactivityTimeout: number;
  abortTimeout: number;
  journalRetention: number;
  idempotencyRetention: number;
  /** The service's value for workflows (a handler override wins); 0 for other services. */
  workflowCompletionRetention: number;
  enableLazyState: boolean;
  retryPolicy: RetryPolicy;
  /** How long the state this handler writes lives unwritten (the handler's override, else the service's); absent: for ever. */
  stateTtl?: number;
}

/** A workflow's `run` handler: it runs once per workflow id, under the id's lock. */
export function isWorkflowRun(h: { service: Pick<ServiceMeta, 'ty'>; handler: Pick<HandlerMeta, 'ty'> }): boolean {
  return h.service.ty === 'Workflow' && h.handler.ty === 'Workflow';
}

/**
 * How long a completed invocation of this handler stays (reference §2.5): a workflow run its
 * workflow retention, a request with an idempotency key its idempotency retention (the key
 * deduplicates that long), anything else its journal retention.
 */
export function completionRetentionOf(handler: EffectiveHandler, idempotent: boolean): number {
  if (isWorkflowRun(handler)) return handler.workflowCompletionRetention;
  return idempotent ? handler.idempotencyRetention : handler.journalRetention;
}

/** The reference server's defaults for values a manifest leaves out (service-protocol.md §3). */
export const registryDefaults = {
  inactivityTimeout: 60_000,
  /** §15: request-response (HTTP/1.1, Lambda) deployments cannot be asked to suspend. */
  requestResponseInactivityTimeout: 0,
  abortTimeout: 10 * 60_000,
  retention: 24 * 3_600_000,
  retryPolicy: {
    initialInterval: 500,
    exponentiationFactor: 2,
    maxAttempts: 70,
    maxInterval: 60_000,
    onMaxAttempts: 'Pause',
  } satisfies RetryPolicy as RetryPolicy,
} as const;
