/**
 * The registry document's other sections (reference-behavior.md §3.7, §3.8): Kafka cluster
 * configurations, subscriptions, and concurrency limit rules. They live in the same document
 * as the deployments and are saved the same way (registry.ts `changeExtras`); documents
 * written before these sections existed load with them empty.
 *
 * Subscriptions are consumed by src/subscriptions/ (which watches this document); creating
 * one never contacts a broker (the reference does not check the broker at creation either,
 * §3.7). Clusters serve every source scheme: `bootstrap.servers` is a Kafka broker list, a
 * `redis://` URL or a list of NATS servers, as the subscription's scheme says.
 *
 * The operations below work on a draft (a copy) and throw the reference's admin errors.
 */
import { Conflict, InvalidRequest, MetaCode, NotFound } from '../errors.js';
import { newSubscriptionId } from './resource-id.js';

export interface KafkaCluster {
  name: string;
  properties: Record<string, string>;
  /** Epoch ms. */
  createdAt: number;
}

export interface Subscription {
  id: string;
  /** `kafka://<cluster>/<topic>`, `nats://<cluster>/<subject>`, `redis-stream://[<cluster>/]<stream>` (parseSource) */
  source: string;
  /** `service://<service>/<handler>` */
  sink: string;
  options: Record<string, string>;
}

export interface LimitRule {
  pattern: string;
  /** Absent = unlimited. */
  concurrency?: number;
  /** Invocations started per second; absent = unlimited. Ours, beyond the reference. */
  rate?: number;
  /** How many may wait in a bucket; past it new requests are refused (429). Absent = unbounded. Ours. */
  backlog?: number;
  description?: string;
  disabled: boolean;
  version: number;
  /** Epoch ms. */
  lastModified: number;
}

export interface RegistryExtras {
  kafkaClusters: KafkaCluster[];
  subscriptions: Subscription[];
  rules: LimitRule[];
}

export const emptyExtras = (): RegistryExtras => ({ kafkaClusters: [], subscriptions: [], rules: [] });

/** Missing sections (older documents) load empty. */
export function extrasFromDoc(doc: Partial<RegistryExtras>): RegistryExtras {
  return {
    kafkaClusters: Array.isArray(doc.kafkaClusters) ? doc.kafkaClusters : [],
    subscriptions: Array.isArray(doc.subscriptions) ? doc.subscriptions : [],
    rules: Array.isArray(doc.rules) ? doc.rules : [],
  };
}

// ---- Kafka clusters ----------------------------------------------------------------------------

function checkBootstrap(name: string, properties: Record<string, string>): void {
  if (!('bootstrap.servers' in properties) && !('metadata.broker.list' in properties)) {
    throw new InvalidRequest(
      `kafka cluster '${name}' properties must contain either 'bootstrap.servers' or 'metadata.broker.list'`,
    );
  }
}

const clusterNotFound = (name: string) => new NotFound(`The requested Kafka cluster '${name}' does not exist`);

/** §3.7: the name is not validated (`bad_name!` is accepted). */
export function createCluster(
  x: RegistryExtras,
  name: string,
  properties: Record<string, string>,
  now: number,
): KafkaCluster {
  if (x.kafkaClusters.some((c) => c.name === name))
    throw new Conflict(`kafka cluster '${name}' already exists in schema registry`);
  checkBootstrap(name, properties);
  const cluster: KafkaCluster = { name, properties, createdAt: now };
  x.kafkaClusters.push(cluster);
  return cluster;
}

export function updateCluster(x: RegistryExtras, name: string, properties: Record<string, string>): KafkaCluster {
  const cluster = x.kafkaClusters.find((c) => c.name === name);
  if (!cluster) throw clusterNotFound(name);
  checkBootstrap(name, properties);
  cluster.properties = properties;
  return cluster;
}

/** Without `force`, a cluster with subscriptions stays (409); with it, they go too. */
export function deleteCluster(x: RegistryExtras, name: string, force: boolean): void {
  if (!x.kafkaClusters.some((c) => c.name === name))
    throw new NotFound(`not found in the schema registry: kafka cluster named '${name}'`);
  const orphans = x.subscriptions.filter((s) => parseSource(s.source)?.cluster === name);
  if (orphans.length > 0 && !force) {
    throw new Conflict(
      `Removing the kafka cluster '${name}' leads to subscription '${orphans[0]!.id}' being orphan. Remove the subscription first, or use the 'force' flag.`,
    );
  }
  x.subscriptions = x.subscriptions.filter((s) => !orphans.includes(s));
  x.kafkaClusters = x.kafkaClusters.filter((c) => c.name !== name);
}

export function getCluster(x: RegistryExtras, name: string): KafkaCluster {
  const cluster = x.kafkaClusters.find((c) => c.name === name);
  if (!cluster) throw clusterNotFound(name);
  return cluster;
}

// ---- subscriptions ----------------------------------------------------------------------------

const invalid = (what: 'source' | 'sink', uri: string, reason: string) =>
  new InvalidRequest(
    `[${MetaCode.invalidSubscription}] invalid ${what} URI '${uri}': ${reason}`,
    MetaCode.invalidSubscription,
  );

/** `scheme://authority/rest` pieces, or undefined without a scheme. */
function splitUri(uri: string): { scheme: string; authority: string; path: string } | undefined {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(?:\/\/([^/?#]*))?([^?#]*)/.exec(uri);
  if (!m) return undefined;
  return { scheme: m[1]!.toLowerCase(), authority: m[2] ?? '', path: m[3] ?? '' };
}

/** The source schemes a subscription may name, in the order META0009 lists them. */
export const SOURCE_SCHEMES = ['kafka', 'redis-stream', 'nats'] as const;
export type SourceScheme = (typeof SOURCE_SCHEMES)[number];

/**
 * A subscription's source: `kafka://{cluster}/{topic}`, `nats://{cluster}/{subject}` and
 * `redis-stream://{cluster}/{stream}` read alike; `redis-stream://{stream}` (no cluster) is
 * a stream of the store's own Redis.
 */
export interface SourceUri {
  scheme: SourceScheme;
  /** '' for a stream of the store's own Redis. */
  cluster: string;
  /** The Kafka topic, the NATS subject, the Redis stream. */
  topic: string;
}

export function parseSource(uri: string): SourceUri | undefined {
  const u = splitUri(uri);
  const scheme = SOURCE_SCHEMES.find((s) => s === u?.scheme);
  if (!u || !scheme) return undefined;
  const topic = u.path.replace(/^\//, '');
  if (scheme === 'redis-stream' && topic === '') return { scheme, cluster: '', topic: u.authority };
  return { scheme, cluster: u.authority, topic };
}

const SOURCE_FORMS: Record<SourceScheme, string> = {
  kafka: 'kafka://<cluster_name>/<topic_name>',
  'redis-stream': 'redis-stream://<stream_name> or redis-stream://<cluster_name>/<stream_name>',
  nats: 'nats://<cluster_name>/<subject>',
};

export function parseSink(uri: string): { service: string; handler: string } {
  const u = splitUri(uri);
  if (!u || u.scheme !== 'service')
    throw invalid('sink', uri, 'must have a scheme segment, with supported schemes: [service].');
  const handler = u.path.replace(/^\//, '');
  if (u.authority === '' || handler === '' || handler.includes('/')) {
    throw invalid('sink', uri, 'the sink URI must have the form service://<service_name>/<handler_name>.');
  }
  return { service: u.authority, handler };
}

/**
 * POST /subscriptions (§3.7): the source is checked, then its cluster, then the sink (whose
 * service and handler must be registered). As in Restate, `group.id` is filled in from the
 * cluster's properties or else the id, and `client.id` (`restate`) unless the cluster has one.
 */
export function createSubscription(
  x: RegistryExtras,
  req: { source: string; sink: string; options?: Record<string, string> },
  handlerExists: (service: string, handler: string) => boolean,
): Subscription {
  const source = parseSource(req.source);
  if (!source)
    throw invalid(
      'source',
      req.source,
      `must have a scheme segment, with supported schemes: [${SOURCE_SCHEMES.join(', ')}].`,
    );
  if (
    source.topic === '' ||
    source.topic.includes('/') ||
    (source.scheme !== 'redis-stream' && source.cluster === '')
  ) {
    throw invalid('source', req.source, `the source URI must have the form ${SOURCE_FORMS[source.scheme]}.`);
  }
  if (source.cluster !== '' && !x.kafkaClusters.some((c) => c.name === source.cluster)) {
    const available = x.kafkaClusters.map((c) => JSON.stringify(c.name)).join(', ');
    throw new InvalidRequest(`Kafka cluster '${source.cluster}' not found. Available clusters: [${available}]`);
  }
  const sink = parseSink(req.sink);
  if (!handlerExists(sink.service, sink.handler)) {
    throw invalid('sink', req.sink, 'cannot find service/handler specified in the sink URI.');
  }
  const id = newSubscriptionId();
  const given = req.options ?? {};
  const cluster = x.kafkaClusters.find((c) => c.name === source.cluster)?.properties ?? {};
  const options: Record<string, string> = {
    'group.id': given['group.id'] ?? cluster['group.id'] ?? id,
    ...(given['client.id'] === undefined && cluster['client.id'] === undefined ? { 'client.id': 'restate' } : {}),
    ...given,
  };
  const subscription: Subscription = { id, source: req.source, sink: req.sink, options };
  x.subscriptions.push(subscription);
  return subscription;
}

export function deleteSubscription(x: RegistryExtras, id: string): void {
  if (!x.subscriptions.some((s) => s.id === id))
    throw new NotFound(`not found in the schema registry: subscription with id '${id}'`);
  x.subscriptions = x.subscriptions.filter((s) => s.id !== id);
}

export function getSubscription(x: RegistryExtras, id: string): Subscription {
  const found = x.subscriptions.find((s) => s.id === id);
  if (!found) throw new NotFound(`The requested subscription '${id}' does not exist`);
  return found;
}

// ---- limit rules ------------------------------------------------------------------------------

export type Precondition = { type: 'none' } | { type: 'does_not_exist' } | { type: 'matches'; version: number };

export interface RuleUpsert {
  pattern: string;
  concurrency?: number;
  rate?: number;
  backlog?: number;
  description?: string;
  disabled: boolean;
  precondition: Precondition;
}

function preconditionFailed(pattern: string, p: Precondition, actual: LimitRule | undefined): Conflict {
  const wanted =
    p.type === 'matches' ? `Matches(v${p.version})` : p.type === 'does_not_exist' ? 'DoesNotExist' : 'None';
  const version = actual ? `Some(v${actual.version})` : 'None';
  return new Conflict(`rule precondition ${wanted} for pattern ${pattern} failed (actual version: ${version})`);
}

function checkPrecondition(pattern: string, p: Precondition, actual: LimitRule | undefined): void {
  if (p.type === 'does_not_exist' && actual) throw preconditionFailed(pattern, p, actual);
  if (p.type === 'matches' && actual?.version !== p.version) throw preconditionFailed(pattern, p, actual);
}

/**
 * PUT /limits/rules (§3.8): all preconditions are checked before anything changes. A new rule
 * starts at version 1; a change of its limits or `disabled` bumps the version.
 */
export function upsertRules(x: RegistryExtras, changes: RuleUpsert[], now: number): LimitRule[] {
  for (const c of changes)
    checkPrecondition(
      c.pattern,
      c.precondition,
      x.rules.find((r) => r.pattern === c.pattern),
    );
  const out: LimitRule[] = [];
  for (const c of changes) {
    const existing = x.rules.find((r) => r.pattern === c.pattern);
    const next: LimitRule = { pattern: c.pattern, disabled: c.disabled, version: 1, lastModified: now };
    if (c.concurrency !== undefined) next.concurrency = c.concurrency;
    if (c.rate !== undefined) next.rate = c.rate;
    if (c.backlog !== undefined) next.backlog = c.backlog;
    if (c.description !== undefined) next.description = c.description;
    if (existing) {
      const relevant =
        existing.concurrency !== next.concurrency ||
        existing.rate !== next.rate ||
        existing.backlog !== next.backlog ||
        existing.disabled !== next.disabled;
      next.version = relevant ? existing.version + 1 : existing.version;
    }
    x.rules = [...x.rules.filter((r) => r.pattern !== c.pattern), next];
    out.push(next);
  }
  return out;
}

/** POST /limits/rules/bulk-delete (§3.8): answers the patterns actually deleted. */
export function deleteRules(
  x: RegistryExtras,
  deletes: Array<{ pattern: string; expectedVersion?: number }>,
): string[] {
  for (const d of deletes) {
    if (d.expectedVersion === undefined) continue;
    checkPrecondition(
      d.pattern,
      { type: 'matches', version: d.expectedVersion },
      x.rules.find((r) => r.pattern === d.pattern),
    );
  }
  const deleted: string[] = [];
  for (const d of deletes) {
    if (x.rules.some((r) => r.pattern === d.pattern)) {
      deleted.push(d.pattern);
      x.rules = x.rules.filter((r) => r.pattern !== d.pattern);
    }
  }
  return deleted;
}
