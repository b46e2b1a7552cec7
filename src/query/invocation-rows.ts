/**
 * Rows of the invocation tables, from an invocation's persisted snapshot
 * (`{ value, context }` of machines/invocation.ts), in the reference's shapes
 * (reference-behavior.md §3.6, admin-query.txt, sql-sample-rows-novq.txt):
 *   - sys_invocation: status `pending|scheduled|running|backing-off|suspended|paused|completed`;
 *   - sys_invocation_status: the same status columns, but `invoked` where the other says
 *     `running` (the CLI filters on it, §4);
 *   - sys_invocation_state: the invoker's view (retries, last failure) of invocations it
 *     is working on, which is also where sys_invocation takes those columns from — so a
 *     completed invocation shows no `retry_count` (admin-query.txt).
 */
import { statusOf, type Awaiting, type InvocationContext, type Target } from '../../machines/invocation.js';
import type { JournalEntry } from '../store/types.js';
import { entryKind, entryTypeName } from './journal-rows.js';
import { isCommand } from '../protocol/messages.js';
import type { Row } from './result.js';

/** What `created_using_restate_version` says: the version this server speaks (GET /version). */
export const RESTATE_VERSION = '1.7.12';

export interface LoadedInvocation {
  partition: number;
  id: string;
  partitionKey: bigint;
  /** The machine state: created, scheduled, pending, running, suspended, backingOff, paused, completed. */
  value: string;
  context: InvocationContext;
}

/** Facts from outside the snapshot; each is looked up only when a query needs it. */
export interface InvocationFacts {
  journal?: JournalEntry[];
  /** How many entries the journal holds, when the pinned columns are read. */
  journalLength?: number;
  /** The caller's target, for invocations stored before they kept their parent's. */
  callerTarget?: Target;
  /** ms; from the handler's current configuration. */
  journalRetention?: number;
  protocolVersion?: number;
  /** The SDK's `x-restate-server` of the pinned deployment. */
  server?: string;
}

export function targetString(t: Target): string {
  return t.key !== undefined ? `${t.service}/${t.key}/${t.handler}` : `${t.service}/${t.handler}`;
}

const SERVICE_TY: Record<Target['serviceTy'], string> = {
  Service: 'service',
  VirtualObject: 'virtual_object',
  Workflow: 'workflow',
};

/** States in which the invoker holds the invocation (and so sys_invocation_state has a row); not paused ones. */
const IN_INVOKER = new Set(['running', 'backingOff']);

const NOT_STARTED = new Set(['scheduled', 'pending']);

/** `{"FirstCompleted":[{"Single":{"CompletionId":1}},{"Single":{"SignalIndex":1}}]}` (§3.6). */
export function awaitingJson(a: Awaiting): string {
  const COMBINATORS = [
    'FirstCompleted',
    'FirstCompleted',
    'AllCompleted',
    'FirstSucceededOrAllFailed',
    'AllSucceededOrFirstFailed',
  ];
  type Future = {
    waitingCompletions?: number[];
    waitingSignals?: number[];
    waitingNamedSignals?: string[];
    nestedFutures?: Future[];
    combinatorType?: number;
  };
  const tree = (f: Future): unknown => {
    const items: unknown[] = [
      ...(f.waitingCompletions ?? []).map((id) => ({ Single: { CompletionId: id } })),
      ...(f.waitingSignals ?? []).map((id) => ({ Single: { SignalIndex: id } })),
      ...(f.waitingNamedSignals ?? []).map((name) => ({ Single: { SignalName: name } })),
      ...(f.nestedFutures ?? []).map(tree),
    ];
    return items.length === 1 ? items[0] : { [COMBINATORS[f.combinatorType ?? 0] ?? 'FirstCompleted']: items };
  };
  const future = (a.future as Future | undefined) ?? {
    waitingCompletions: a.completions,
    waitingSignals: a.signals,
    waitingNamedSignals: a.namedSignals,
  };
  return JSON.stringify(tree(future));
}

/** Restate's failure text: `[500 Internal] message`, then the stack trace on the next line. */
function failureText(f: { code: number; message: string; stacktrace?: string }): string {
  const name = f.code === 500 ? ' Internal' : '';
  return `[${f.code}${name}] ${f.message}${f.stacktrace ? `\n${f.stacktrace}` : ''}`;
}

/** The journal index of the `n`-th command. */
function entryIndexOfCommand(journal: JournalEntry[], n: number): number | undefined {
  let seen = 0;
  for (let i = 0; i < journal.length; i++) {
    if (!isCommand(journal[i]!.type)) continue;
    if (seen === n) return i;
    seen++;
  }
  return undefined;
}

/** The columns sys_invocation and sys_invocation_status share. */
function statusColumns(inv: LoadedInvocation, facts: InvocationFacts): Row {
  const c = inv.context;
  const t = c.target;
  const parentTarget = c.parent?.target ?? facts.callerTarget;
  // Restate pins the deployment with the first entry the SDK stores; we pin it earlier (at
  // creation, docs/architecture.md), and show it as Restate does.
  const shownPin = (facts.journalLength ?? 0) > 1 ? c.deploymentId : undefined;
  const row: Row = {
    id: inv.id,
    target: targetString(t),
    target_service_name: t.service,
    target_service_key: t.key,
    target_handler_name: t.handler,
    target_service_ty: SERVICE_TY[t.serviceTy],
    scope: t.scope,
    limit_key: c.limitKey,
    vqueue_id: c.vqueueId,
    idempotency_key: c.idempotencyKey,
    invoked_by: c.invokedBy,
    invoked_by_id: c.parent?.invocationId ?? c.caller?.invocationId,
    invoked_by_subscription_id: c.subscriptionId,
    invoked_by_service_name: parentTarget?.service,
    invoked_by_target: parentTarget ? targetString(parentTarget) : undefined,
    restarted_from: c.restartedFrom,
    pinned_deployment_id: shownPin,
    pinned_service_protocol_version: shownPin !== undefined ? facts.protocolVersion : undefined,
    created_at: c.createdAt,
    created_using_restate_version: RESTATE_VERSION,
    modified_at: c.modifiedAt,
    // Queued behind its key's lock since it entered `pending` (which set modifiedAt).
    inboxed_at: inv.value === 'pending' ? c.modifiedAt : undefined,
    // A delayed send: scheduled when created, to start at scheduled_start_at (admin-query.txt).
    scheduled_at: c.scheduledStartAt !== undefined ? c.createdAt : undefined,
    scheduled_start_at: c.scheduledStartAt,
    running_at: c.runningAt,
    completed_at: c.completedAt,
    completion_retention: c.completionRetention,
    journal_retention: facts.journalRetention,
  };
  // An invocation that has not started has no journal yet in Restate (its input waits in the
  // schedule or the key's inbox).
  if (facts.journal && !NOT_STARTED.has(inv.value)) {
    row.journal_size = facts.journal.length;
    row.journal_commands_size = facts.journal.filter((e) => isCommand(e.type)).length;
  }
  if (inv.value === 'suspended' && c.awaiting) {
    const future = c.awaiting.future as { waitingCompletions?: number[]; waitingSignals?: number[] } | undefined;
    row.suspended_waiting_for_completions = future?.waitingCompletions ?? c.awaiting.completions;
    row.suspended_waiting_for_signals = future?.waitingSignals ?? c.awaiting.signals;
    row.suspended_waiting_future_json = awaitingJson(c.awaiting);
  }
  return row;
}

function completionColumns(c: InvocationContext): Row {
  if (!c.completion) return {};
  if ('ok' in c.completion) return { completion_result: 'success' };
  const f = c.completion.failure;
  return { completion_result: 'failure', completion_failure: `[${f.code}] ${f.message}` };
}

/** The invoker's columns (retries, last failure); empty unless the invoker holds the invocation. */
function invokerColumns(inv: LoadedInvocation, facts: InvocationFacts): Row {
  if (!IN_INVOKER.has(inv.value)) return {};
  const c = inv.context;
  const row: Row = {
    retry_count: BigInt(c.retryCount),
    // The current attempt started with the transition into `running`, which set modifiedAt.
    last_start_at: inv.value === 'running' ? c.modifiedAt : c.lastStartAt,
    next_retry_at: c.nextRetryAt,
    last_attempt_deployment_id: c.deploymentId,
    last_attempt_server: c.deploymentId !== undefined ? facts.server : undefined,
  };
  const f = c.lastFailure;
  if (f) {
    row.last_failure = failureText(f);
    row.last_failure_error_code = f.errorCode;
    if (f.relatedCommandIndex !== undefined) {
      const type = f.relatedCommandType !== undefined ? entryKind(f.relatedCommandType) : undefined;
      row.last_failure_related_command_index = BigInt(f.relatedCommandIndex);
      row.last_failure_related_command_name = f.relatedCommandName;
      row.last_failure_related_command_type = type;
      const entry = facts.journal ? entryIndexOfCommand(facts.journal, f.relatedCommandIndex) : undefined;
      if (entry !== undefined) {
        row.last_failure_related_entry_index = BigInt(entry);
        row.last_failure_related_entry_name = f.relatedCommandName;
        row.last_failure_related_entry_type = entryTypeName(facts.journal![entry]!.type).replace(/^Command: /, '');
      }
    }
  }
  return row;
}

export function invocationRow(inv: LoadedInvocation, facts: InvocationFacts): Row {
  return {
    ...statusColumns(inv, facts),
    ...invokerColumns(inv, facts),
    status: statusOf(inv.value),
    ...completionColumns(inv.context),
  };
}

export function invocationStatusRow(inv: LoadedInvocation, facts: InvocationFacts): Row {
  const status = statusOf(inv.value);
  return {
    partition_key: inv.partitionKey,
    ...statusColumns(inv, facts),
    status: status === 'running' ? 'invoked' : status,
    ...completionColumns(inv.context),
  };
}

export function invocationStateRow(inv: LoadedInvocation, facts: InvocationFacts): Row | undefined {
  if (!IN_INVOKER.has(inv.value)) return undefined;
  return {
    partition_key: inv.partitionKey,
    id: inv.id,
    in_flight: inv.value === 'running',
    ...invokerColumns(inv, facts),
  };
}

/** The invocation holding each key's exclusive lock (sys_keyed_service_status). */
export function keyedStatusRows(invocations: LoadedInvocation[]): Row[] {
  return invocations
    .filter((inv) => inv.context.lockHeld === true && inv.value !== 'completed' && inv.context.target.key !== undefined)
    .map((inv) => ({
      partition_key: inv.partitionKey,
      service_name: inv.context.target.service,
      service_key: inv.context.target.key,
      invocation_id: inv.id,
    }));
}

/** Invocations queued behind their key's lock, in arrival order per key (sys_inbox). */
export function inboxRows(invocations: LoadedInvocation[]): Row[] {
  const waiting = invocations
    .filter((inv) => inv.value === 'pending' && inv.context.target.key !== undefined)
    .sort((a, b) => a.context.createdAt - b.context.createdAt || (a.id < b.id ? -1 : 1));
  const seq = new Map<string, number>();
  return waiting.map((inv) => {
    const key = JSON.stringify([inv.context.target.service, inv.context.target.key]);
    const n = seq.get(key) ?? 0;
    seq.set(key, n + 1);
    return {
      partition_key: inv.partitionKey,
      service_name: inv.context.target.service,
      service_key: inv.context.target.key,
      id: inv.id,
      sequence_number: BigInt(n),
      created_at: inv.context.createdAt,
    };
  });
}
