/**
 * Every Prometheus instrument of the process, in one registry served as `/metrics` on the admin
 * and node ports. Restate's names (and label names, dots turned to underscores as its exporter
 * does) where the meaning is the same, so dashboards and alerts written for Restate work;
 * `redstate_…` for what only redstate has.
 *
 * Hot-path rules: label values come from small fixed sets (statuses, backends, partitions,
 * registered services), never from ids or raw paths; instruments with a fixed label are bound
 * once with `.labels(...)`.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';

export const metricsRegistry = new Registry();
const registers = [metricsRegistry];

// ---------------------------------------------------------------------------------------------
// Ingress (recorded by src/ingress/telemetry.ts)

/** `status` values of `restate_ingress_requests_total`, as Restate names them. */
export type IngressRequestStatus = 'admitted' | 'completed' | 'invocation_error' | 'request_error' | 'ingress_error';

/**
 * `restate_ingress_requests_total{status}`: every ingress request once as `admitted`; requests
 * to a service handler (call/send) once more with their outcome and `rpc_service`, `rpc_type`
 * (`call` | `send`).
 */
export const ingressRequests = new Counter({
  name: 'restate_ingress_requests_total',
  help: 'Number of ingress requests in different states, see label status to classify',
  labelNames: ['status', 'rpc_service', 'rpc_type'] as const,
  registers,
});

/**
 * `restate_ingress_request_duration_seconds{rpc_service, rpc_type}`: time from the request to
 * its answer (for a call: until the invocation completed). A summary with Restate's quantiles
 * and window (0.5, 0.9, 0.99, 1 over the last minute), so its dashboards' quantile queries work.
 */
export const ingressRequestDuration = new Summary({
  name: 'restate_ingress_request_duration_seconds',
  help: 'Total latency of Ingress request processing in seconds',
  labelNames: ['rpc_service', 'rpc_type'] as const,
  percentiles: [0.5, 0.9, 0.99, 1],
  maxAgeSeconds: 60,
  ageBuckets: 3,
  registers,
});

// ---------------------------------------------------------------------------------------------
// Store (recorded by src/store/)

export type StoreBackend = 'redis' | 'embedded';

/** `redstate_store_commit_duration_seconds{backend}`: from `commit()` to durable (fsync included). */
export const storeCommitDuration = new Histogram({
  name: 'redstate_store_commit_duration_seconds',
  help: 'Time from a commit request to the transition being durable, per store backend',
  labelNames: ['backend'] as const,
  buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
  registers,
});

/** `redstate_store_group_commit_size{backend}`: commits that shared one write (one fsync). */
export const storeGroupCommitSize = new Histogram({
  name: 'redstate_store_group_commit_size',
  help: 'Number of commits written together in one group (one fsync), per store backend',
  labelNames: ['backend'] as const,
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
  registers,
});

/** `redstate_store_connected{backend}`: 1 while the store is reachable, 0 during an outage. */
export const storeConnected = new Gauge({
  name: 'redstate_store_connected',
  help: 'Whether the store is reachable (1) or in an outage (0)',
  labelNames: ['backend'] as const,
  registers,
});

/** The store instruments of one backend, bound once. */
export function storeMetrics(backend: StoreBackend) {
  return {
    commitDuration: storeCommitDuration.labels(backend),
    groupCommitSize: storeGroupCommitSize.labels(backend),
    connected: storeConnected.labels(backend),
  };
}
export type StoreMetrics = ReturnType<typeof storeMetrics>;

// ---------------------------------------------------------------------------------------------
// Runtime (defined here for src/runtime/ to record; see docs/architecture.md, "Telemetry")

/** `partition_id` label values, made once per partition rather than once per event. */
const partitionLabels: string[] = [];
const partitionLabel = (partition: number): string => (partitionLabels[partition] ??= String(partition));

/** `status` values of `restate_invoker_invocation_tasks_total`, as Restate names them. */
export type InvocationTaskStatus = 'started' | 'suspended' | 'failed' | 'completed';

/**
 * `restate_invoker_invocation_tasks_total{status, partition_id}`. Restate's docs still spell it
 * `restate_invoker_invocation_task_total`; 1.7 servers export this name.
 */
export const invokerInvocationTasks = new Counter({
  name: 'restate_invoker_invocation_tasks_total',
  help: 'Invocation task operation',
  labelNames: ['status', 'partition_id'] as const,
  registers,
});

/**
 * One attempt (Restate: an invocation task) `started`, then once more as it ends: `completed`
 * (End), `suspended` (Suspension), `failed` (Error, a lost stream, a timeout).
 */
export function recordInvocationTask(status: InvocationTaskStatus, partition: number): void {
  invokerInvocationTasks.inc({ status, partition_id: partitionLabel(partition) });
}

/** `restate_invoker_enqueue_total{partition_id}`. */
export const invokerEnqueue = new Counter({
  name: 'restate_invoker_enqueue_total',
  help: 'Number of invocations that were added to the queue',
  labelNames: ['partition_id'] as const,
  registers,
});

/** An invocation was handed to the invoker for an attempt (first start, retry, resume). */
export function recordEnqueue(partition: number): void {
  invokerEnqueue.inc({ partition_id: partitionLabel(partition) });
}

/** `kind` values of `redstate_actors_in_memory`. */
export type ActorKind = 'invocation' | 'object_key';

/** `redstate_actors_in_memory{kind}`: live actors in the runtime's caches. */
export const actorsInMemory = new Gauge({
  name: 'redstate_actors_in_memory',
  help: 'Actors held in memory, by kind',
  labelNames: ['kind'] as const,
  registers,
});

/** An actor was created or rehydrated into memory (`+1`), or dropped from it (`-1`). */
export function recordActorsInMemory(kind: ActorKind, delta: 1 | -1): void {
  actorsInMemory.inc({ kind }, delta);
}

/**
 * `redstate_timers_armed`: in-process timers currently armed (at most one per partition: the
 * earliest durable timer). `timersArmed.set(n)` where the timer service arms and clears them.
 */
export const timersArmed = new Gauge({
  name: 'redstate_timers_armed',
  help: 'In-process timers armed for the earliest durable timer of each partition',
  registers,
});

/**
 * `redstate_fenced_commits_total`: commits refused because this node does not hold their
 * partition: `where="node"` refused before sending (no lease, or the lease may have run out),
 * `where="store"` refused by the store's epoch check (another node acquired the partition).
 */
export const fencedCommits = new Counter({
  name: 'redstate_fenced_commits_total',
  help: 'Commits refused because this node does not hold their partition lease',
  labelNames: ['where'] as const,
  registers,
});

/** `redstate_partitions_owned`: partitions whose lease this node holds. */
export const partitionsOwned = new Gauge({
  name: 'redstate_partitions_owned',
  help: 'Partitions whose lease this node holds',
  registers,
});

/**
 * `redstate_outbox_messages`: outbox messages committed but not yet delivered.
 * `outboxMessages.inc(n)` after the commit that writes them, `.dec(n)` after the commit that
 * removes them, `.set(n)` from the store's outboxes at start-up.
 */
export const outboxMessages = new Gauge({
  name: 'redstate_outbox_messages',
  help: 'Outbox messages committed and not yet delivered',
  registers,
});

/** `status` values of `redstate_invocations`: sys_invocation's statuses. */
export type InvocationStatus = 'pending' | 'scheduled' | 'ready' | 'running' | 'backing-off' | 'suspended' | 'paused' | 'completed';

/** `redstate_invocations{status}`: invocations known to this process, by status. */
export const invocationsByStatus = new Gauge({
  name: 'redstate_invocations',
  help: 'Invocations by status (sys_invocation statuses)',
  labelNames: ['status'] as const,
  registers,
});

/**
 * Moves one invocation between statuses after the commit that changed it: `from` undefined when
 * it was created, `to` undefined when it was purged. At start-up, set the counts from the store
 * with `invocationsByStatus.set({ status }, n)`.
 */
export function invocationStatusChanged(from: InvocationStatus | undefined, to: InvocationStatus | undefined): void {
  if (from === to) return;
  if (from !== undefined) invocationsByStatus.dec({ status: from });
  if (to !== undefined) invocationsByStatus.inc({ status: to });
}

// ---------------------------------------------------------------------------------------------

let processMetricsStarted = false;

/**
 * Node's process metrics (CPU, memory, event-loop lag, GC, handles) under their usual names.
 * Started by the server, not at import: they sample in the background.
 */
export function startProcessMetrics(): void {
  if (processMetricsStarted) return;
  processMetricsStarted = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

/** The Prometheus text exposition of every instrument. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}
