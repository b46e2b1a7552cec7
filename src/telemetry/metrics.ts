/**
 * Every Prometheus instrument of the process, in one registry served as `/metrics` on the admin
 * and node ports. Restate's names (and label names, dots turned to underscores as its exporter
 * does) where the meaning is the same, so dashboards and alerts written for Restate work;
 * `redstate_…` for what only redstate has.
 *
 * Hot-path rules: label values come from small fixed sets (statuses, backends, partitions,
 * registered services), never from ids or raw paths; instruments with a fixed label are bound
 * once with `.labels(...)`; those moved on every invocation count in a `Tally` (./tally.ts)
 * that they read when scraped, and are recorded only through the functions here.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';
import { Tally, type Cell } from './tally.js';

export const metricsRegistry = new Registry();
const registers = [metricsRegistry];

// ---------------------------------------------------------------------------------------------
// Ingress (recorded by src/ingress/telemetry.ts)

/** `status` values of `restate_ingress_requests_total`, as Restate names them. */
export type IngressRequestStatus = 'admitted' | 'completed' | 'invocation_error' | 'request_error' | 'ingress_error';

/** What `restate_ingress_requests_total` labels an invocation request with. */
export interface IngressRpc {
  rpc_service: string;
  rpc_type: 'call' | 'send';
}

const ingressRequestCounts = new Tally<'status' | 'rpc_service' | 'rpc_type'>();

/**
 * `restate_ingress_requests_total{status}`: every ingress request once as `admitted`; requests
 * to a service handler (call/send) once more with their outcome and `rpc_service`, `rpc_type`
 * (`call` | `send`).
 */
new Counter({
  name: 'restate_ingress_requests_total',
  help: 'Number of ingress requests in different states, see label status to classify',
  labelNames: ['status', 'rpc_service', 'rpc_type'] as const,
  registers,
  collect() {
    ingressRequestCounts.reportCounter(this);
  },
});

let admittedCell: Cell | undefined;
/** Keyed by status, type and service; status and type hold no space. */
const outcomeCells = new Map<string, Cell>();

export function recordIngressAdmitted(): void {
  (admittedCell ??= ingressRequestCounts.cell({ status: 'admitted' })).value++;
}

/** The outcome of a request to a service handler. */
export function recordIngressOutcome(status: IngressRequestStatus, rpc: IngressRpc): void {
  const key = `${status} ${rpc.rpc_type} ${rpc.rpc_service}`;
  let cell = outcomeCells.get(key);
  if (cell === undefined) outcomeCells.set(key, (cell = ingressRequestCounts.cell({ status, ...rpc })));
  cell.value++;
}

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

const invocationTaskCounts = new Tally<'status' | 'partition_id'>();

/**
 * `restate_invoker_invocation_tasks_total{status, partition_id}`. Restate's docs still spell it
 * `restate_invoker_invocation_task_total`; 1.7 servers export this name.
 */
new Counter({
  name: 'restate_invoker_invocation_tasks_total',
  help: 'Invocation task operation',
  labelNames: ['status', 'partition_id'] as const,
  registers,
  collect() {
    invocationTaskCounts.reportCounter(this);
  },
});

const invocationTaskCells: Record<InvocationTaskStatus, Cell[]> = {
  started: [],
  suspended: [],
  failed: [],
  completed: [],
};

/**
 * One attempt (Restate: an invocation task) `started`, then once more as it ends: `completed`
 * (End), `suspended` (Suspension), `failed` (Error, a lost stream, a timeout).
 */
export function recordInvocationTask(status: InvocationTaskStatus, partition: number): void {
  (invocationTaskCells[status][partition] ??= invocationTaskCounts.cell({
    status,
    partition_id: partitionLabel(partition),
  })).value++;
}

const enqueueCounts = new Tally<'partition_id'>();

/** `restate_invoker_enqueue_total{partition_id}`. */
new Counter({
  name: 'restate_invoker_enqueue_total',
  help: 'Number of invocations that were added to the queue',
  labelNames: ['partition_id'] as const,
  registers,
  collect() {
    enqueueCounts.reportCounter(this);
  },
});

const enqueueCells: Cell[] = [];

/** An invocation was handed to the invoker for an attempt (first start, retry, resume). */
export function recordEnqueue(partition: number): void {
  (enqueueCells[partition] ??= enqueueCounts.cell({ partition_id: partitionLabel(partition) })).value++;
}

/** `kind` values of `redstate_actors_in_memory`. */
export type ActorKind = 'invocation' | 'object_key';

const actorCounts = new Tally<'kind'>();

/** `redstate_actors_in_memory{kind}`: live actors in the runtime's caches. */
new Gauge({
  name: 'redstate_actors_in_memory',
  help: 'Actors held in memory, by kind',
  labelNames: ['kind'] as const,
  registers,
  collect() {
    actorCounts.reportGauge(this);
  },
});

const actorCells: Partial<Record<ActorKind, Cell>> = {};

/** An actor was created or rehydrated into memory (`+1`), or dropped from it (`-1`). */
export function recordActorsInMemory(kind: ActorKind, delta: 1 | -1): void {
  (actorCells[kind] ??= actorCounts.cell({ kind })).value += delta;
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

/** `redstate_attempts_waiting_to_start`: attempts whose start waits for a slot (runtime/invoker/start-gate.ts). */
export const attemptsWaitingToStart = new Gauge({
  name: 'redstate_attempts_waiting_to_start',
  help: 'Attempts waiting for one of the starting slots before they open their stream',
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
export type InvocationStatus =
  'pending' | 'scheduled' | 'ready' | 'running' | 'backing-off' | 'suspended' | 'paused' | 'completed';

const statusCounts = new Tally<'status'>();

/** `redstate_invocations{status}`: invocations known to this process, by status. */
new Gauge({
  name: 'redstate_invocations',
  help: 'Invocations by status (sys_invocation statuses)',
  labelNames: ['status'] as const,
  registers,
  collect() {
    statusCounts.reportGauge(this);
  },
});

const statusCells: Partial<Record<InvocationStatus, Cell>> = {};
const statusCell = (status: InvocationStatus): Cell => (statusCells[status] ??= statusCounts.cell({ status }));

/**
 * Moves one invocation between statuses after the commit that changed it: `from` undefined when
 * it was created, `to` undefined when it was purged.
 */
export function invocationStatusChanged(from: InvocationStatus | undefined, to: InvocationStatus | undefined): void {
  if (from === to) return;
  if (from !== undefined) statusCell(from).value--;
  if (to !== undefined) statusCell(to).value++;
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

// ---------------------------------------------------------------------------------------------
// How often a request's facts are worked out (src/registry/registry.ts, src/runtime/runtime.ts):
// one handler look-up and one runtime operation per ingress call is the design, and
// test/e2e/commit-count.test.ts holds it there.

let handlerLookups = 0;

/** `redstate_registry_handler_lookups_total`: handlers resolved in the registry. */
new Counter({
  name: 'redstate_registry_handler_lookups_total',
  help: 'Handlers resolved in the registry (a request resolves its handler once and carries it)',
  registers,
  collect() {
    this.reset();
    this.inc(handlerLookups);
  },
});

export function recordHandlerLookup(): void {
  handlerLookups++;
}

const runtimeOperationCounts = new Tally<'operation'>();
const runtimeOperationCells = new Map<string, Cell>();

/** `redstate_runtime_operations_total{operation}`: operations of the runtime's face entered on this node (forwarded ones where they were entered). */
new Counter({
  name: 'redstate_runtime_operations_total',
  help: "Operations of the runtime's face entered on this node, by operation",
  labelNames: ['operation'] as const,
  registers,
  collect() {
    runtimeOperationCounts.reportCounter(this);
  },
});

/** `operation`: one of the runtime's own fixed operation names. */
export function recordRuntimeOperation(operation: string): void {
  let cell = runtimeOperationCells.get(operation);
  if (cell === undefined) runtimeOperationCells.set(operation, (cell = runtimeOperationCounts.cell({ operation })));
  cell.value++;
}
