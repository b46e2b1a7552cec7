/**
 * The registry of deployments and service revisions.
 *
 * One small document, persisted whole through `Store.saveRegistry` and cached in memory.
 * Every change is computed on a copy, saved, and only then made visible and answered
 * (design.md, "The invariant"). Changes are serialised; reads never wait.
 *
 * The latest revision of a service is the highest revision any deployment serves, so deleting
 * the deployment that holds it falls back to the previous one (reference-behavior.md §3.3).
 */
import { Conflict, InvalidRequest, MetaCode, NotFound, NotImplemented } from '../errors.js';
import { discover as realDiscover, type DiscoverOptions, type DiscoveryResult } from '../protocol/discovery.js';
import type { Store } from '../store/types.js';
import { confirmed } from '../store/confirmed.js';
import { newDeploymentId } from './deployment-id.js';
import { emptyExtras, extrasFromDoc, type RegistryExtras } from './extras.js';
import { servicesFromManifest } from './from-manifest.js';
import {
  carryStateTtl,
  type Deployment,
  type EffectiveHandler,
  type HandlerMeta,
  type RetryPolicy,
  type ServiceMeta,
} from './types.js';
import { normaliseUri, sameEndpoint } from './uri.js';
import { recordHandlerLookup } from '../telemetry/metrics.js';

export interface RegisterRequest {
  /** Normalised here (uri.ts `normaliseUri`). */
  uri: string;
  useHttp11?: boolean;
  additionalHeaders?: Record<string, string>;
  /** Rediscover and replace a deployment with the same URI. Absent = false: the same URI is a no-op. */
  force?: boolean;
  /** Allow a service type change across revisions. */
  breaking?: boolean;
  /** Discover and answer, store nothing. */
  dryRun?: boolean;
}

export interface DeploymentPatch {
  /** Already normalised. A new URI (or `useHttp11`) re-runs discovery. */
  uri?: string;
  useHttp11?: boolean;
  /** Replaces the headers; `null` removes them. */
  additionalHeaders?: Record<string, string> | null;
  /** Take the rediscovered services and handlers too (revisions kept). */
  overwrite?: boolean;
  dryRun?: boolean;
}

/** PATCH /services/{name} (§3.4); durations in ms. */
export interface ServicePatch {
  public?: boolean;
  idempotencyRetention?: number;
  journalRetention?: number;
  workflowCompletionRetention?: number;
  inactivityTimeout?: number;
  abortTimeout?: number;
  /** A redstate extension: Restate's ModifyServiceRequest has no retry policy. */
  retryPolicy?: Partial<RetryPolicy>;
  /** Ours too (issue 26): the service's state TTL; 0 turns it off. */
  stateTtl?: number;
  /** Per-handler overrides of it, by handler name; null removes the override. */
  handlerStateTtl?: Record<string, number | null>;
}

/** The state TTL a handler's writes get: its override, else its service's; none when that is 0 or unset. */
function stateTtlOf(s: ServiceMeta, h: HandlerMeta): { stateTtl?: number } {
  const ttl = h.stateTtl ?? s.stateTtl;
  return ttl !== undefined && ttl > 0 ? { stateTtl: ttl } : {};
}

function patchStateTtl(service: ServiceMeta, patch: ServicePatch): void {
  if (service.ty === 'Service')
    throw new InvalidRequest(`state_ttl is for virtual objects and workflows, and '${service.name}' is a service`);
  if (patch.stateTtl === 0) delete service.stateTtl;
  else if (patch.stateTtl !== undefined) service.stateTtl = patch.stateTtl;
  for (const [name, ttl] of Object.entries(patch.handlerStateTtl ?? {})) {
    const h = service.handlers.find((x) => x.name === name);
    if (!h) throw new InvalidRequest(`the service '${service.name}' has no handler '${name}'`);
    if (ttl === null) delete h.stateTtl;
    else h.stateTtl = ttl;
  }
}

export type DiscoverFn = (uri: string, opts: DiscoverOptions) => Promise<DiscoveryResult>;

/** Kafka clusters, subscriptions and rules (extras.ts) are optional: older documents lack them. */
interface RegistryDoc extends Partial<RegistryExtras> {
  version: 1;
  deployments: Deployment[];
}

interface Latest {
  service: ServiceMeta;
  deployment: Deployment;
}

export class Registry {
  private deployments: Deployment[] = [];
  private extras: RegistryExtras = emptyExtras();
  private latest = new Map<string, Latest>();
  /** The handlers resolved since the last change, by service and handler name. */
  private effective = new Map<string, EffectiveHandler>();
  private changes = 0;
  private queue: Promise<unknown> = Promise.resolve();
  /** Tells the other nodes sharing the store of a change saved here (server.ts); nothing alone. */
  private announce: () => Promise<void> = () => Promise.resolve();

  private constructor(
    private readonly store: Store,
    private readonly discoverFn: DiscoverFn,
    /** How long a save waits for an unreachable store (store/confirmed.ts). */
    private readonly outageWaitMs: number,
  ) {}

  /** @param opts.outageWaitMs how long a change waits for an unreachable store before it fails (default: not at all) */
  static async load(store: Store, opts: { discover?: DiscoverFn; outageWaitMs?: number } = {}): Promise<Registry> {
    const registry = new Registry(store, opts.discover ?? realDiscover, opts.outageWaitMs ?? 1);
    const doc = (await store.loadRegistry()) as Partial<RegistryDoc> | undefined;
    if (doc !== undefined && doc !== null) {
      if (doc.version !== 1 || !Array.isArray(doc.deployments))
        throw new Error('registry document has an unknown format');
      registry.deployments = doc.deployments;
      registry.extras = extrasFromDoc(doc);
    }
    registry.reindex();
    return registry;
  }

  /**
   * Takes what the store holds now, when another node changed it (several nodes share one
   * store, src/cluster/); serialised with this node's own changes.
   */
  refresh(): Promise<void> {
    return this.exclusive(async () => {
      const doc = (await this.store.loadRegistry()) as Partial<RegistryDoc> | undefined;
      if (doc === undefined || doc === null || doc.version !== 1 || !Array.isArray(doc.deployments)) return;
      const extras = extrasFromDoc(doc);
      if (
        JSON.stringify(doc.deployments) === JSON.stringify(this.deployments) &&
        JSON.stringify(extras) === JSON.stringify(this.extras)
      )
        return;
      this.deployments = doc.deployments;
      this.extras = extras;
      this.reindex();
    });
  }

  /**
   * Every change saved here is announced with `announce` before it is answered, so the other
   * nodes answer as this one at once (they would read it again within a round anyway).
   */
  announceChangesWith(announce: () => Promise<void>): void {
    this.announce = announce;
  }

  // ---- reads -------------------------------------------------------------------------------

  /** Newest registration first. */
  listDeployments(): Deployment[] {
    return [...this.deployments].sort((a, b) => b.createdAt - a.createdAt);
  }

  getDeployment(id: string): Deployment | undefined {
    return this.deployments.find((d) => d.id === id);
  }

  /** The latest revision of every service, by name. */
  listServices(): ServiceMeta[] {
    return [...this.latest.values()].map((l) => l.service).sort((a, b) => a.name.localeCompare(b.name));
  }

  getService(name: string): ServiceMeta | undefined {
    return this.latest.get(name)?.service;
  }

  /**
   * Raised by every change of what `resolveHandler` answers: a handler resolved under an
   * earlier generation may be stale (a new revision, a patched setting) and is looked up again.
   */
  get generation(): number {
    return this.changes;
  }

  /**
   * The latest revision of a handler with the service's settings under its overrides; the same
   * object until the registry changes. Counted (`redstate_registry_handler_lookups_total`): a
   * request resolves its handler once and carries it.
   */
  resolveHandler(service: string, handler: string): EffectiveHandler | undefined {
    recordHandlerLookup();
    const name = `${service}/${handler}`;
    const known = this.effective.get(name);
    if (known) return known;
    const resolved = this.effectiveHandler(service, handler);
    if (resolved) this.effective.set(name, resolved);
    return resolved;
  }

  private effectiveHandler(service: string, handler: string): EffectiveHandler | undefined {
    const latest = this.latest.get(service);
    const h = latest?.service.handlers.find((x) => x.name === handler);
    if (!latest || !h) return undefined;
    const s = latest.service;
    const retry = Object.fromEntries(Object.entries(h.retryPolicy ?? {}).filter(([, v]) => v !== undefined));
    return {
      generation: this.changes,
      service: s,
      handler: h,
      deployment: latest.deployment,
      public: s.public && h.public,
      inactivityTimeout: h.inactivityTimeout ?? s.inactivityTimeout,
      abortTimeout: h.abortTimeout ?? s.abortTimeout,
      journalRetention: h.journalRetention ?? s.journalRetention,
      idempotencyRetention: h.idempotencyRetention ?? s.idempotencyRetention,
      workflowCompletionRetention: h.workflowCompletionRetention ?? s.workflowCompletionRetention ?? 0,
      enableLazyState: h.enableLazyState ?? s.enableLazyState,
      retryPolicy: { ...s.retryPolicy, ...retry },
      ...stateTtlOf(s, h),
    };
  }

  // ---- changes -----------------------------------------------------------------------------

  /**
   * POST /deployments (§3.3): a known URI without `force` is answered as it is, without
   * discovery; otherwise discover, check, assign revisions and store (unless `dryRun`).
   */
  register(req: RegisterRequest): Promise<{ created: boolean; deployment: Deployment }> {
    return this.exclusive(async () => {
      const uri = normaliseUri(req.uri) ?? req.uri;
      const existing = this.deployments.find((d) => sameEndpoint(d.uri, uri));
      if (existing && !req.force) return { created: false, deployment: existing };

      const useHttp11 = req.useHttp11 ?? false;
      const found = await this.discoverFn(uri, { useHttp11, additionalHeaders: req.additionalHeaders });
      // §3.3: a dry run answers 201 with a fresh id and stores nothing; for a known URI
      // (with force) 200 and its id, which the CLI's `deployments register` looks up (§4).
      const id = existing ? existing.id : newDeploymentId();
      const services = servicesFromManifest(found.manifest, {
        deploymentId: id,
        revisionOf: (name) => this.nextRevision(name),
      }).map((s) => carryStateTtl(s, this.latest.get(s.name)?.service));
      if (!req.breaking && !req.force) this.checkCompatible(services);

      const deployment: Deployment = {
        id,
        uri,
        protocolType: found.manifest.protocolMode === 'REQUEST_RESPONSE' ? 'RequestResponse' : 'BidiStream',
        httpVersion: useHttp11 ? 'HTTP/1.1' : 'HTTP/2.0',
        createdAt: Date.now(),
        minProtocolVersion: found.manifest.minProtocolVersion,
        maxProtocolVersion: found.manifest.maxProtocolVersion,
        services,
      };
      if (req.additionalHeaders && Object.keys(req.additionalHeaders).length > 0)
        deployment.additionalHeaders = req.additionalHeaders;
      if (found.sdkVersion !== undefined) deployment.sdkVersion = found.sdkVersion;

      if (req.dryRun) return { created: existing === undefined, deployment };
      await this.commit([...this.deployments.filter((d) => d.id !== id), deployment]);
      return { created: existing === undefined, deployment };
    });
  }

  /** PATCH /deployments/{id} (§3.3): headers change in place; a new URI is rediscovered. */
  updateDeployment(id: string, patch: DeploymentPatch): Promise<Deployment> {
    return this.exclusive(async () => {
      const existing = this.getDeployment(id);
      if (!existing) throw new NotFound(`The requested deployment '${id}' does not exist`);
      const next: Deployment = structuredClone(existing);
      if (patch.additionalHeaders === null) delete next.additionalHeaders;
      else if (patch.additionalHeaders !== undefined) next.additionalHeaders = patch.additionalHeaders;

      if (patch.uri !== undefined || patch.useHttp11 !== undefined) {
        const uri = patch.uri ?? existing.uri;
        const useHttp11 = patch.useHttp11 ?? existing.httpVersion === 'HTTP/1.1';
        const found = await this.discoverFn(uri, { useHttp11, additionalHeaders: next.additionalHeaders });
        next.uri = uri;
        next.httpVersion = useHttp11 ? 'HTTP/1.1' : 'HTTP/2.0';
        next.protocolType = found.manifest.protocolMode === 'REQUEST_RESPONSE' ? 'RequestResponse' : 'BidiStream';
        next.minProtocolVersion = found.manifest.minProtocolVersion;
        next.maxProtocolVersion = found.manifest.maxProtocolVersion;
        if (found.sdkVersion !== undefined) next.sdkVersion = found.sdkVersion;
        else delete next.sdkVersion;
        if (patch.overwrite) {
          next.services = servicesFromManifest(found.manifest, {
            deploymentId: id,
            revisionOf: (name) => existing.services.find((s) => s.name === name)?.revision ?? this.nextRevision(name),
          }).map((s) => carryStateTtl(s, this.latest.get(s.name)?.service));
        }
      }
      if (!patch.dryRun) await this.commit(this.deployments.map((d) => (d.id === id ? next : d)));
      return next;
    });
  }

  /** DELETE /deployments/{id} (§3.3): only with `force` (501 otherwise, as the reference). */
  deleteDeployment(id: string, force: boolean): Promise<void> {
    return this.exclusive(async () => {
      if (!force) throw new NotImplemented('removing a deployment without force is not supported');
      if (!this.getDeployment(id)) throw new NotFound(`not found in the schema registry: deployment with id '${id}'`);
      await this.commit(this.deployments.filter((d) => d.id !== id));
    });
  }

  /**
   * PATCH /services/{name} (§3.4): changes the latest revision in place, without a new
   * revision; the next registration of the service starts again from the manifest's values.
   */
  modifyService(name: string, patch: ServicePatch): Promise<ServiceMeta> {
    return this.exclusive(async () => {
      const latest = this.latest.get(name);
      if (!latest) throw new NotFound(`not found in the schema registry: service with name '${name}'`);
      const service: ServiceMeta = structuredClone(latest.service);
      if (patch.workflowCompletionRetention !== undefined) {
        if (service.ty !== 'Workflow')
          throw new InvalidRequest(`modifying retention time for service type ${service.ty} is unsupported`);
        service.workflowCompletionRetention = patch.workflowCompletionRetention;
      }
      if (patch.public !== undefined) service.public = patch.public;
      if (patch.idempotencyRetention !== undefined) service.idempotencyRetention = patch.idempotencyRetention;
      if (patch.journalRetention !== undefined) service.journalRetention = patch.journalRetention;
      if (patch.inactivityTimeout !== undefined) service.inactivityTimeout = patch.inactivityTimeout;
      if (patch.abortTimeout !== undefined) service.abortTimeout = patch.abortTimeout;
      if (patch.retryPolicy !== undefined) service.retryPolicy = { ...service.retryPolicy, ...patch.retryPolicy };
      if (patch.stateTtl !== undefined || patch.handlerStateTtl !== undefined) patchStateTtl(service, patch);
      const deploymentId = latest.deployment.id;
      await this.commit(
        this.deployments.map((d) =>
          d.id !== deploymentId ? d : { ...d, services: d.services.map((s) => (s.name === name ? service : s)) },
        ),
      );
      return service;
    });
  }

  // ---- Kafka clusters, subscriptions, limit rules (extras.ts) --------------------------------

  /** The current extras; read-only for callers (changes go through `changeExtras`). */
  getExtras(): Readonly<RegistryExtras> {
    return this.extras;
  }

  /** Applies `change` to a copy of the extras, saves the document, then makes it visible. */
  changeExtras<T>(change: (draft: RegistryExtras) => T): Promise<T> {
    return this.exclusive(async () => {
      const draft = structuredClone(this.extras);
      const result = change(draft);
      await this.save({ version: 1, deployments: this.deployments, ...draft });
      this.extras = draft;
      await this.announce();
      return result;
    });
  }

  // ---- internals ---------------------------------------------------------------------------

  private nextRevision(name: string): number {
    let max = 0;
    for (const d of this.deployments)
      for (const s of d.services) if (s.name === name && s.revision > max) max = s.revision;
    return max + 1;
  }

  /** §3.3: a new revision may not change the service type unless `breaking` (or `force`). */
  private checkCompatible(services: ServiceMeta[]): void {
    for (const s of services) {
      const previous = this.latest.get(s.name)?.service;
      if (previous && previous.ty !== s.ty) {
        throw new Conflict(
          `[${MetaCode.incompatibleRevision}] detected a new service revision for '${s.name}' changing the service type from previous revision. Service type cannot be changed across revisions.`,
          MetaCode.incompatibleRevision,
        );
      }
    }
  }

  private async commit(deployments: Deployment[]): Promise<void> {
    await this.save({ version: 1, deployments, ...this.extras });
    this.deployments = deployments;
    this.reindex();
    await this.announce();
  }

  /** The whole document, saved again after an outage until the store confirms it: saving it twice is saving it once. */
  private save(doc: RegistryDoc): Promise<void> {
    return confirmed({ store: this.store, boundMs: this.outageWaitMs }, () => this.store.saveRegistry(doc));
  }

  private reindex(): void {
    const latest = new Map<string, Latest>();
    for (const deployment of this.deployments) {
      for (const service of deployment.services) {
        const current = latest.get(service.name);
        if (!current || service.revision > current.service.revision) latest.set(service.name, { service, deployment });
      }
    }
    this.latest = latest;
    this.effective = new Map();
    this.changes++;
  }

  /** Runs changes one at a time, so revisions are assigned from the state the change saw. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
