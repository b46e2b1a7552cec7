/**
 * The flow-control tables, read from the scopes' limiter records (machines/limiter.ts):
 * `sys_vqueue_meta` (one row per virtual queue), `sys_scheduler` (one row per queue with
 * waiting invocations, and what blocks its head: `blocked_on`) and `sys_user_limits` (one row
 * per rule bucket in use); and `sys_vqueues` (one row per invocation of a queue) from the
 * invocations. Durations and counters that are not kept are null.
 */
import {
  admissionOrder,
  backlogUse,
  blockedOn,
  matchingBuckets,
  PRIORITY,
  type LimiterContext,
} from '../../machines/limiter.js';
import { partitionKeyOf } from '../protocol/ids.js';
import { limiterContextOf, readScopeLimiter, RecordKind } from '../model/persisted.js';
import type { Store } from '../store/types.js';
import type { LoadedInvocation } from './invocation-rows.js';
import type { Row } from './result.js';

export async function limiterContexts(store: Store, partitions: number): Promise<LimiterContext[]> {
  const out: LimiterContext[] = [];
  for (let p = 0; p < partitions; p++) {
    for (const scope of await store.listRecords(p, RecordKind.limiter)) {
      const { head, waiters } = await readScopeLimiter(store, p, scope);
      if (head) out.push(limiterContextOf(head, waiters));
    }
  }
  return out;
}

/**
 * One row per virtual queue. The invocations holding a slot are counted by their status
 * (`statusOf`, sys_invocation's): suspended and paused ones apart from the running ones, as the
 * reference counts them (the CLI's `vqueues describe` reads all three).
 */
export function vqueueMetaRows(
  limiters: LimiterContext[],
  statusOf: (invocationId: string) => string | undefined,
): Row[] {
  return limiters.flatMap((l) =>
    Object.entries(l.vqueues).map(([id, q]): Row => {
      const inbox = l.waiting.filter((s) => s.vqueue === id).length;
      const holders = l.running.filter((s) => s.vqueue === id).map((s) => statusOf(s.invocationId));
      const running = holders.length;
      const suspended = holders.filter((s) => s === 'suspended').length;
      const paused = holders.filter((s) => s === 'paused').length;
      return {
        partition_key: partitionKeyOf(l.scope),
        id,
        is_active: inbox + running > 0,
        queue_is_paused: l.paused.includes(id),
        service_name: q.service,
        scope: l.scope,
        limit_key: q.limitKey,
        lock_name: q.lockName,
        created_at: q.createdAt,
        last_enqueued_at: q.lastEnqueuedAt,
        last_start_at: q.lastStartAt,
        last_attempt_at: q.lastStartAt,
        last_finish_at: q.lastFinishAt,
        num_inbox: BigInt(inbox),
        num_running: BigInt(running - suspended - paused),
        num_suspended: BigInt(suspended),
        num_paused: BigInt(paused),
        num_finished: BigInt(q.finished),
      };
    }),
  );
}

/** One row per virtual queue with waiters; its head is the waiter that starts next (by priority, then arrival). */
export function schedulerRows(limiters: LimiterContext[], now: number): Row[] {
  return limiters.flatMap((l) => {
    const heads = new Map<string, LimiterContext['waiting'][number]>();
    for (const slot of admissionOrder(l.waiting)) if (!heads.has(slot.vqueue)) heads.set(slot.vqueue, slot);
    return [...heads].map(([id, head]): Row => {
      const blocked = blockedOn(l, head, now);
      const inbox = l.waiting.filter((s) => s.vqueue === id);
      const byPriority: Record<string, number> = {};
      // Whole-number keys: JSON lists them in ascending order, first-starting first.
      for (const { priority = PRIORITY.default } of inbox) byPriority[priority] = (byPriority[priority] ?? 0) + 1;
      const backlog = backlogUse(l, head.limitKey);
      return {
        partition_key: partitionKeyOf(l.scope),
        id,
        num_inbox: BigInt(inbox.length),
        status: blocked ? 'blocked' : 'ready',
        head_entry_id: head.invocationId,
        blocked_on: blocked,
        blocked_on_json: blocked ? JSON.stringify({ resource: blocked }) : undefined,
        head_priority: head.priority ?? PRIORITY.default,
        num_inbox_by_priority: JSON.stringify(byPriority),
        backlog_limit: backlog?.limit,
        backlog_used: backlog ? BigInt(backlog.used) : undefined,
      };
    });
  });
}

const LEVELS = ['Scope', 'Level1', 'Level2'] as const;

export function userLimitRows(limiters: LimiterContext[]): Row[] {
  return limiters.flatMap((l) => {
    const rows = new Map<string, Row>();
    const count = (limitKey: string | undefined, field: 'usage' | 'num_waiters') => {
      for (const { rule, bucket } of matchingBuckets(l.rules, l.scope, limitKey)) {
        if (rule.concurrency === undefined && rule.backlog === undefined) continue;
        const values = bucket.slice(bucket.indexOf('|') + 1).split('/');
        const row = rows.get(bucket) ?? {
          partition_key: partitionKeyOf(l.scope),
          scope: l.scope,
          l1: values[1],
          l2: values[2],
          level: LEVELS[values.length - 1],
          usage: 0,
          concurrency_limit: rule.concurrency,
          rule_pattern: rule.pattern,
          num_waiters: 0n,
          backlog_limit: rule.backlog,
        };
        if (field === 'usage') row['usage'] = (row['usage'] as number) + 1;
        else row['num_waiters'] = (row['num_waiters'] as bigint) + 1n;
        rows.set(bucket, row);
      }
    };
    for (const s of l.running) count(s.limitKey, 'usage');
    for (const s of l.waiting) count(s.limitKey, 'num_waiters');
    const available = (r: Row) =>
      r['concurrency_limit'] === undefined
        ? undefined
        : Math.max(0, (r['concurrency_limit'] as number) - (r['usage'] as number));
    return [...rows.values()].map((r) => ({ ...r, available: available(r) }));
  });
}

/**
 * Where an invocation stands in its virtual queue, in the reference's words (observed on
 * restate-server 1.7.12: `inbox`/`new` while it waits, `running`/`started`, `paused`/`started`,
 * `finished`/`succeeded` or `failed`); a suspended one is `suspended`/`started`.
 */
function stageOf(inv: LoadedInvocation): { stage: string; status: string } {
  switch (inv.value) {
    case 'created':
    case 'pending':
    case 'scheduled':
      return { stage: 'inbox', status: 'new' };
    case 'suspended':
    case 'paused':
      return { stage: inv.value, status: 'started' };
    case 'completed':
      return {
        stage: 'finished',
        status: inv.context.completion && 'ok' in inv.context.completion ? 'succeeded' : 'failed',
      };
    default:
      return { stage: 'running', status: 'started' };
  }
}

/** `sys_vqueues`: one row per invocation that went through a virtual queue (what `restate vqueues describe` lists). */
export function vqueueEntryRows(invocations: LoadedInvocation[]): Row[] {
  // In arrival order, as the reference lists a queue's entries.
  const queued = invocations
    .filter((inv) => inv.context.vqueueId !== undefined)
    .sort((a, b) => a.context.createdAt - b.context.createdAt);
  return queued.map((inv): Row => {
    const c = inv.context;
    const { stage, status } = stageOf(inv);
    const started = c.runningAt !== undefined;
    return {
      partition_key: inv.partitionKey,
      id: c.vqueueId ?? null,
      stage,
      status,
      has_lock: false,
      run_at: stage === 'inbox' ? (c.scheduledStartAt ?? c.createdAt) : null,
      entry_id: inv.id,
      entry_kind: 'invocation',
      created_at: c.createdAt,
      transitioned_at: c.modifiedAt,
      num_attempts: started ? c.retryCount + 1 : 0,
      first_attempt_at: c.runningAt ?? null,
      latest_attempt_at: c.lastStartAt ?? c.runningAt ?? null,
      first_runnable_at: c.scheduledStartAt ?? c.createdAt,
      deployment: stage === 'finished' ? (c.deploymentId ?? null) : null,
    };
  });
}
