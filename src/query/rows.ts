/**
 * Where the tables' rows come from: the store (through its read methods only, partition by
 * partition) and the registry. One `storeRowSource` serves one query, so tables of the same
 * query share what was read (snapshots, journals).
 *
 * Only what a query can see is read: `id = '…'` pins load just those invocations (the id
 * names its partition), journals are read only for sys_journal or journal sizes, callers only
 * for `invoked_by_target` (plan.ts).
 */
import type { Config } from '../config.js';
import { parseInvocationId } from '../protocol/ids.js';
import type { Registry } from '../registry/registry.js';
import { completionRetentionOf, type Deployment } from '../registry/types.js';
import { parseObjectRecordKey, readInvocation, RecordKind, type PromiseRecord } from '../model/persisted.js';
import { negotiatedVersion } from '../protocol/versions.js';
import { partitionOfId, partitionOfTarget, targetPartitionKey } from '../model/partitioning.js';
import { splitStoredService, storedService } from '../model/state-owner.js';
import type { HistoryEntry, HistoryFailure, JournalEntry, Store } from '../store/types.js';
import type { RowSource } from './engine.js';
import {
  inboxRows,
  invocationRow,
  invocationStateRow,
  invocationStatusRow,
  keyedStatusRows,
  type InvocationFacts,
  type LoadedInvocation,
} from './invocation-rows.js';
import { journalRows, type CalleeLookup } from './journal-rows.js';
import { stateExpiryRows } from './expiry-rows.js';
import { scheduleRows } from './schedule-rows.js';
import { limiterContexts, schedulerRows, userLimitRows, vqueueEntryRows, vqueueMetaRows } from './flow-rows.js';
import { statusOf } from '../../machines/invocation.js';
import { pinnedValues, type QueryPlan, type TableScan } from './plan.js';
import type { Row } from './result.js';

export interface QuerySources {
  store: Store;
  registry: Registry;
  config: Config;
  /** Each subscription's consumer, when the server consumes subscriptions (src/subscriptions/). */
  subscriptions?: () => Promise<SubscriptionProgressRow[]>;
  /** This node's id: the owner of every partition of a store no other node shares. */
  nodeId?: string;
}

/** What `sys_subscription_progress` shows of one subscription. */
export interface SubscriptionProgressRow {
  subscriptionId: string;
  source: string;
  sink: string;
  status: string;
  delivered: number;
  inFlight: number;
  lag: number | undefined;
  ratePerSecond: number;
  lastStream: string | undefined;
  lastPosition: string | undefined;
  lastMessageAt: number | undefined;
  lastError: string | undefined;
}

function subscriptionProgressRow(p: SubscriptionProgressRow): Row {
  return {
    id: p.subscriptionId,
    source: p.source,
    sink: p.sink,
    status: p.status,
    delivered: BigInt(p.delivered),
    in_flight: BigInt(p.inFlight),
    lag: p.lag !== undefined ? BigInt(p.lag) : null,
    messages_per_second: BigInt(Math.round(p.ratePerSecond)),
    last_stream: p.lastStream ?? null,
    last_position: p.lastPosition ?? null,
    last_message_at: p.lastMessageAt ?? null,
    last_error: p.lastError ?? null,
  };
}

const SERVICE_TY = { Service: 'service', VirtualObject: 'virtual_object', Workflow: 'workflow' } as const;

/** Reads invocations and journals once per query. */
class StoreReader {
  private all: Promise<LoadedInvocation[]> | undefined;
  private readonly byId = new Map<string, Promise<LoadedInvocation | undefined>>();
  private readonly journals = new Map<string, Promise<JournalEntry[]>>();

  constructor(private readonly deps: QuerySources) {}

  /** Keys of the object-key lock records of a partition (`["service","key"]`). */
  objectKeys(partition: number): Promise<string[]> {
    return this.deps.store.listRecords(partition, RecordKind.objectKey);
  }

  /** Every invocation, or those of the given ids (unknown and malformed ids are skipped). */
  async invocations(ids?: Set<string>): Promise<LoadedInvocation[]> {
    if (ids) return (await Promise.all([...ids].map((id) => this.invocation(id)))).filter((i) => i !== undefined);
    this.all ??= this.loadAll();
    return this.all;
  }

  invocation(id: string): Promise<LoadedInvocation | undefined> {
    let found = this.byId.get(id);
    if (!found) {
      let partition: number;
      try {
        partition = partitionOfId(id, this.deps.config.partitions);
      } catch {
        return Promise.resolve(undefined);
      }
      found = this.load(partition, id);
      this.byId.set(id, found);
    }
    return found;
  }

  journal(inv: LoadedInvocation): Promise<JournalEntry[]> {
    let entries = this.journals.get(inv.id);
    if (!entries) {
      entries = this.deps.store.readJournal(inv.partition, inv.id);
      this.journals.set(inv.id, entries);
    }
    return entries;
  }

  private async loadAll(): Promise<LoadedInvocation[]> {
    const partitions = Array.from({ length: this.deps.config.partitions }, (_, p) => p);
    const perPartition = await Promise.all(
      partitions.map(async (p) => {
        const ids = await this.deps.store.listInvocations(p);
        return Promise.all(
          ids.map((id) => {
            const loaded = this.load(p, id);
            this.byId.set(id, loaded);
            return loaded;
          }),
        );
      }),
    );
    return perPartition.flat().filter((i) => i !== undefined);
  }

  private async load(partition: number, id: string): Promise<LoadedInvocation | undefined> {
    const raw = await this.deps.store.loadInvocation(partition, id);
    if (raw === undefined) return undefined;
    const { value, context } = readInvocation(raw);
    return { partition, id, partitionKey: parseInvocationId(id).partitionKey, value, context };
  }
}

/** The facts about one invocation that live outside its snapshot, read only when used. */
async function factsOf(
  inv: LoadedInvocation,
  reader: StoreReader,
  deps: QuerySources,
  plan: QueryPlan,
): Promise<InvocationFacts> {
  const c = inv.context;
  const facts: InvocationFacts = {};
  const failureEntry = [
    'last_failure_related_entry_index',
    'last_failure_related_entry_name',
    'last_failure_related_entry_type',
  ];
  if (
    plan.usesColumn('journal_size') ||
    plan.usesColumn('journal_commands_size') ||
    (c.lastFailure?.relatedCommandIndex !== undefined && failureEntry.some((col) => plan.usesColumn(col)))
  ) {
    facts.journal = await reader.journal(inv);
  }
  if (
    c.deploymentId !== undefined &&
    (plan.usesColumn('pinned_deployment_id') || plan.usesColumn('pinned_service_protocol_version'))
  ) {
    facts.journalLength = facts.journal?.length ?? (await deps.store.journalLength(inv.partition, inv.id));
  }
  if (c.caller && !c.parent && (plan.usesColumn('invoked_by_service_name') || plan.usesColumn('invoked_by_target'))) {
    const caller = await reader.invocation(c.caller.invocationId);
    if (caller) facts.callerTarget = caller.context.target;
  }
  const handler = deps.registry.resolveHandler(c.target.service, c.target.handler);
  if (handler) facts.journalRetention = handler.journalRetention;
  const deployment = c.deploymentId !== undefined ? deps.registry.getDeployment(c.deploymentId) : undefined;
  if (deployment) {
    const version = negotiatedVersion(deployment, deps.config.enableProtocolV7);
    if (version !== undefined) facts.protocolVersion = version;
    if (deployment.sdkVersion !== undefined) facts.server = deployment.sdkVersion;
  }
  return facts;
}

/**
 * The (service, key) pairs whose state the `state` table shows. Object state has no index of
 * its own in the store yet, so the owners are found from the targets of keyed invocations, or
 * taken straight from a query that pins both `service_name` and `service_key`. This is the one
 * place to change once state gets its own listing.
 */
async function stateOwners(
  reader: StoreReader,
  scan: TableScan,
  config: Config,
): Promise<Array<{ partition: number; service: string; key: string }>> {
  const services = pinnedValues(scan, 'service_name');
  const keys = pinnedValues(scan, 'service_key');
  const owners = new Map<string, { partition: number; service: string; key: string }>();
  const add = (partition: number, service: string, key: string) => {
    if (services && !services.has(splitStoredService(service).service)) return;
    if (keys && !keys.has(key)) return;
    owners.set(JSON.stringify([service, key]), { partition, service, key });
  };
  if (services && keys) {
    // Unscoped state of the pinned keys is read straight from their partitions.
    for (const service of services)
      for (const key of keys) add(partitionOfTarget({ key }, config.partitions), service, key);
  } else {
    for (const inv of await reader.invocations()) {
      const t = inv.context.target;
      if (t.key !== undefined && t.serviceTy !== 'Service') add(inv.partition, storedService(t), t.key);
    }
  }
  // Every key whose state anything could write has a lock record: exclusive handlers and
  // admin state mutations take the lock (runtime/kernel/object-keys.ts), also once their
  // invocations are purged. Scoped state lives in its scope's partition, found here too.
  for (let p = 0; p < config.partitions; p++) {
    for (const record of await reader.objectKeys(p)) {
      const parsed = parseObjectRecordKey(record);
      if (parsed) add(p, storedService(parsed), parsed.key);
    }
  }
  return [...owners.values()];
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

async function stateRows(reader: StoreReader, scan: TableScan, deps: QuerySources): Promise<Row[]> {
  const owners = await stateOwners(reader, scan, deps.config);
  const perOwner = await Promise.all(
    owners.map(async ({ partition, service: stored, key }) => {
      const state = await deps.store.readState(partition, stored, key);
      const { service, scope } = splitStoredService(stored);
      return [...state].map(([name, value]): Row => {
        let text: string | undefined;
        try {
          text = strictUtf8.decode(value);
        } catch {
          text = undefined;
        }
        return {
          partition_key: targetPartitionKey({ key, scope }),
          scope,
          service_name: service,
          service_key: key,
          key: name,
          key_length: BigInt(Buffer.byteLength(name)),
          value_utf8: text,
          value,
          value_length: BigInt(value.length),
        };
      });
    }),
  );
  return perOwner.flat();
}

function deploymentRow(d: Deployment): Row {
  return {
    id: d.id,
    ty: 'http',
    endpoint: d.uri,
    created_at: d.createdAt,
    min_service_protocol_version: d.minProtocolVersion,
    max_service_protocol_version: d.maxProtocolVersion,
    services: [...new Set(d.services.map((s) => s.name))],
  };
}

/** What a journal's calls name, from the registry's current view of their callees. */
function calleeLookup(registry: Registry): CalleeLookup {
  return (service, name, idempotent) => {
    const handler = registry.resolveHandler(service, name);
    if (!handler) return undefined;
    return {
      serviceTy: handler.service.ty,
      handlerTy: handler.handler.ty,
      completionRetention: completionRetentionOf(handler, idempotent),
      journalRetention: handler.journalRetention,
    };
  };
}

/** A row source over the store and registry, for one query. */
export function storeRowSource(deps: QuerySources): RowSource {
  const reader = new StoreReader(deps);
  const withFacts = async <T>(
    scan: TableScan,
    plan: QueryPlan,
    build: (inv: LoadedInvocation, facts: InvocationFacts) => T,
  ): Promise<T[]> => {
    const invocations = await reader.invocations(pinnedValues(scan, 'id'));
    return Promise.all(invocations.map(async (inv) => build(inv, await factsOf(inv, reader, deps, plan))));
  };
  return async (scan, plan) => {
    switch (scan.table.name) {
      case 'sys_invocation':
        return withFacts(scan, plan, invocationRow);
      case 'sys_invocation_status':
        return withFacts(scan, plan, invocationStatusRow);
      case 'sys_invocation_state':
        return (await withFacts(scan, plan, invocationStateRow)).filter((r) => r !== undefined);
      case 'sys_journal': {
        const invocations = await reader.invocations(pinnedValues(scan, 'id'));
        const lookup = calleeLookup(deps.registry);
        const rows = await Promise.all(
          invocations.map(async (inv) => journalRows(inv.partitionKey, inv.id, await reader.journal(inv), lookup)),
        );
        return rows.flat();
      }
      case 'sys_keyed_service_status':
        return keyedStatusRows(await reader.invocations());
      case 'sys_inbox':
        return inboxRows(await reader.invocations());
      case 'state':
        return stateRows(reader, scan, deps);
      case 'sys_service':
        return deps.registry.listServices().map((s) => ({
          name: s.name,
          revision: BigInt(s.revision),
          public: s.public,
          ty: SERVICE_TY[s.ty],
          deployment_id: s.deploymentId,
        }));
      case 'sys_deployment':
        return deps.registry.listDeployments().map(deploymentRow);
      case 'sys_rules':
        // Limit rules from the registry (PUT /limits/rules, reference-behavior.md §3.8).
        return [...deps.registry.getExtras().rules]
          .sort((a, b) => (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0))
          .map((r) => ({
            pattern: r.pattern,
            concurrency: r.concurrency ?? null,
            description: r.description ?? null,
            disabled: r.disabled,
            version: r.version,
            last_modified: r.lastModified,
          }));
      case 'sys_invocation_transitions': {
        const invocations = await reader.invocations(pinnedValues(scan, 'id'));
        const rows = await Promise.all(
          invocations.map(async (inv) => transitionRows(inv.id, await deps.store.readHistory(inv.partition, inv.id))),
        );
        return rows.flat();
      }
      case 'sys_journal_events':
        return (await reader.invocations(pinnedValues(scan, 'id'))).flatMap(journalEventRows);
      case 'sys_promise':
        return promiseRows(deps);
      case 'sys_vqueue_meta': {
        const limiters = await limiterContexts(deps.store, deps.config.partitions);
        const holders = await reader.invocations(
          new Set(limiters.flatMap((l) => l.running.map((s) => s.invocationId))),
        );
        const statuses = new Map(holders.map((inv) => [inv.id, statusOf(inv.value)]));
        return vqueueMetaRows(limiters, (id) => statuses.get(id));
      }
      case 'sys_vqueues':
        return vqueueEntryRows(await reader.invocations());
      case 'sys_scheduler':
        return schedulerRows(await limiterContexts(deps.store, deps.config.partitions), Date.now());
      case 'sys_user_limits':
        return userLimitRows(await limiterContexts(deps.store, deps.config.partitions));
      case 'sys_subscription_progress':
        return ((await deps.subscriptions?.()) ?? []).map(subscriptionProgressRow);
      case 'sys_partitions':
        return partitionRows(deps);
      case 'sys_state_expiry':
        return stateExpiryRows(deps.store, deps.config.partitions);
      case 'sys_schedule':
        return scheduleRows(deps.store, deps.config.partitions);
      default:
        // sys_locks and sys_vqueue_entry_status: nothing we record fills them; they answer
        // with their columns and no rows.
        return [];
    }
  };
}

async function partitionRows(deps: QuerySources): Promise<Row[]> {
  const { partitions } = deps.config;
  const leases =
    (await deps.store.coordination?.leases(partitions)) ??
    Array.from({ length: partitions }, (_, partition) => ({
      partition,
      nodeId: deps.nodeId,
      epoch: 0,
      expiresAt: undefined,
    }));
  return leases.map((l) => ({
    partition_id: l.partition,
    node_id: l.nodeId ?? null,
    epoch: BigInt(l.epoch),
    lease_expires_at: l.expiresAt ?? null,
  }));
}

function transitionRows(id: string, history: HistoryEntry[]): Row[] {
  return history.map((h, index) => ({
    id,
    index: BigInt(index),
    from_state: h.from,
    event: h.event,
    to_state: h.to,
    at: h.at,
    attempt: BigInt(h.attempt),
    failure_json: h.failure ? JSON.stringify(transientErrorJson(h.failure)) : null,
  }));
}

/** An attempt's failure as sys_journal_events' `TransientError` gives it (and the transitions' `failure_json`). */
function transientErrorJson(f: HistoryFailure) {
  return {
    error_code: f.code,
    error_message: f.message,
    ...(f.stacktrace ? { error_stacktrace: f.stacktrace } : {}),
    ...(f.relatedCommandIndex !== undefined ? { related_command_index: f.relatedCommandIndex } : {}),
    ...(f.relatedCommandName ? { related_command_name: f.relatedCommandName } : {}),
    restate_doc_error_code: f.errorCode ?? 'RT0007',
  };
}

/**
 * sys_journal_events (reference-behavior.md §3.6): we keep an invocation's last attempt
 * failure, not every one, so this is at most one `TransientError` row (the reference also
 * skips identical consecutive errors), plus `Paused` while the invocation is paused.
 */
function journalEventRows(inv: LoadedInvocation): Array<Record<string, unknown>> {
  const f = inv.context.lastFailure;
  if (!f) return [];
  const base = {
    partition_key: inv.partitionKey,
    id: inv.id,
    after_journal_entry_index: f.relatedCommandIndex ?? null,
    appended_at: f.at,
  };
  const rows: Array<Record<string, unknown>> = [
    {
      ...base,
      event_type: 'TransientError',
      event_json: JSON.stringify({ ty: 'TransientError', ...transientErrorJson(f) }),
    },
  ];
  if (inv.value === 'paused')
    rows.push({ ...base, event_type: 'Paused', event_json: JSON.stringify({ ty: 'Paused' }) });
  return rows;
}

/** sys_promise: the durable promises of workflows (runtime/promises.ts records). */
async function promiseRows(deps: QuerySources): Promise<Array<Record<string, unknown>>> {
  const rows: Array<Record<string, unknown>> = [];
  for (let p = 0; p < deps.config.partitions; p++) {
    for (const key of await deps.store.listRecords(p, RecordKind.promise)) {
      const rec = (await deps.store.getRecord(p, RecordKind.promise, key)) as PromiseRecord | undefined;
      const [stored, workflowKey, name] = JSON.parse(key) as [string, string, string];
      const { service, scope } = splitStoredService(stored);
      const value = rec?.result && 'value' in rec.result ? Buffer.from(rec.result.value, 'base64') : undefined;
      rows.push({
        partition_key: targetPartitionKey({ key: workflowKey, scope }),
        scope: scope ?? null,
        service_name: service,
        service_key: workflowKey,
        key: name,
        completed: rec?.result !== undefined,
        completion_success_value: value ?? null,
        completion_success_value_utf8: value ? value.toString('utf8') : null,
        completion_failure:
          rec?.result && 'failure' in rec.result ? `[${rec.result.failure.code}] ${rec.result.failure.message}` : null,
      });
    }
  }
  return rows;
}
