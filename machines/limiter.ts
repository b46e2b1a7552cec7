/**
 * The flow control of one scope (api-spec §1.9, reference-behavior.md §3.8): which of the
 * scope's invocations may run now.
 *
 * An invocation asks for a slot (`acquire`) before it runs and gives it back when it completes
 * (`release`); a running, suspended or backing-off invocation keeps its slot, as in Restate.
 * A slot is given when every enabled rule matching the invocation's scope and limit key has
 * room: fewer holders in the rule's bucket than its `concurrency`, and a token in its bucket
 * when it has a `rate`. The others wait, and are admitted by priority, then in arrival order,
 * whenever something changes: a release, a rule change, a resume, a token. A paused virtual
 * queue's invocations wait whatever the rules say. A rule's `backlog` bounds how many may wait
 * in its bucket; the runtime refuses new requests past it before they are stored
 * (`backlogFull`), so the machine never sees them.
 *
 * Pure: every event carries the rules in force and `now`; giving a slot is an effect (`grant`)
 * the runtime performs after the commit, and `wakeAt` asks for a `tick` when the next token
 * is due.
 */
import { enqueueActions, setup } from 'xstate';
import { Stepper } from './stepper.js';

/** An enabled limit rule (registry/extras.ts `LimitRule`). */
export interface FlowRule {
  /** Up to three `/`-separated components: scope, limit-key levels; `*` matches any value. */
  pattern: string;
  concurrency?: number;
  /** Invocations started per second (a token bucket holding one token). */
  rate?: number;
  /** How many may wait in the rule's bucket; past it new requests are refused. */
  backlog?: number;
}

/** Priorities of `x-restate-priority`: 1 starts first, 9 last; without one, the middle. */
export const PRIORITY = { first: 1, last: 9, default: 5 } as const;

export interface VqueueRef {
  id: string;
  service: string;
  /** `service/key` for an invocation that also takes its key's lock. */
  lockName?: string;
}

export interface Slot {
  invocationId: string;
  limitKey?: string;
  vqueue: string;
  /** When it asked (waiting) or got it (running). */
  at: number;
  /** `PRIORITY`; absent means `PRIORITY.default`. */
  priority?: number;
}

const priorityOf = (slot: Slot): number => slot.priority ?? PRIORITY.default;

/** Waiters in the order they are admitted: by priority, then by arrival (`waiting`'s order; the sort is stable). */
export function admissionOrder(waiting: readonly Slot[]): Slot[] {
  return [...waiting].sort((a, b) => priorityOf(a) - priorityOf(b));
}

export interface VqueueMeta {
  service: string;
  limitKey?: string;
  lockName?: string;
  createdAt: number;
  lastEnqueuedAt: number;
  lastStartAt?: number;
  lastFinishAt?: number;
  finished: number;
}

export interface LimiterContext {
  scope: string;
  rules: FlowRule[];
  running: Slot[];
  /** In arrival order. */
  waiting: Slot[];
  paused: string[];
  vqueues: Record<string, VqueueMeta>;
  /** Token buckets of rate rules, by bucket name: tokens (at most 1) as of `at`. */
  tokens: Record<string, { tokens: number; at: number }>;
}

interface Stamp {
  rules: FlowRule[];
  now: number;
}

export type LimiterEvent =
  | ({ type: 'acquire'; invocationId: string; limitKey?: string; priority?: number; vqueue: VqueueRef } & Stamp)
  | ({ type: 'release'; invocationId: string } & Stamp)
  /** Rules changed, or a token is due: admit what can run now. */
  | ({ type: 'tick' } & Stamp)
  | ({ type: 'pauseQueue'; vqueue: string } & Stamp)
  | ({ type: 'resumeQueue'; vqueue: string } & Stamp);

export type LimiterEffect =
  { type: 'grant'; params: { invocationId: string } } | { type: 'wakeAt'; params: { dueAt: number } };

export function limiterEffects(actions: ReadonlyArray<{ type: string; params?: unknown }>): LimiterEffect[] {
  return actions.filter((a) => a.type === 'grant' || a.type === 'wakeAt') as LimiterEffect[];
}

/** Why a waiting invocation does not run (sys_scheduler.blocked_on). */
export type BlockedOn = 'vqueue-paused' | 'limit-key-concurrency' | 'limit-key-throttling';

/** The rules that apply to an invocation of `scope` with `limitKey`, each with its bucket (the values its pattern covers). */
export function matchingBuckets(
  rules: FlowRule[],
  scope: string,
  limitKey: string | undefined,
): Array<{ rule: FlowRule; bucket: string }> {
  const values = [scope, ...(limitKey === undefined ? [] : limitKey.split('/'))];
  const out: Array<{ rule: FlowRule; bucket: string }> = [];
  for (const rule of rules) {
    const parts = rule.pattern.split('/');
    if (parts.length > values.length) continue;
    if (parts.every((p, i) => p === '*' || p === values[i]))
      out.push({ rule, bucket: `${rule.pattern}|${values.slice(0, parts.length).join('/')}` });
  }
  return out;
}

const refill = (bucket: { tokens: number; at: number } | undefined, rate: number, now: number): number =>
  bucket === undefined ? 1 : Math.min(1, bucket.tokens + ((now - bucket.at) * rate) / 1000);

type BucketsOf = (limitKey: string | undefined) => Array<{ rule: FlowRule; bucket: string }>;

/** `matchingBuckets` of this context's rules, computed once per limit key (waiters share few keys). */
function bucketsOf(context: LimiterContext): BucketsOf {
  const memo = new Map<string, Array<{ rule: FlowRule; bucket: string }>>();
  return (limitKey) => {
    const k = limitKey ?? '';
    let found = memo.get(k);
    if (!found) {
      found = matchingBuckets(context.rules, context.scope, limitKey);
      memo.set(k, found);
    }
    return found;
  };
}

/** How many slots each bucket's holders take. */
function usage(context: LimiterContext, buckets: BucketsOf): Map<string, number> {
  const used = new Map<string, number>();
  for (const r of context.running)
    for (const { bucket } of buckets(r.limitKey)) used.set(bucket, (used.get(bucket) ?? 0) + 1);
  return used;
}

function reason(
  context: LimiterContext,
  slot: Slot,
  now: number,
  buckets: BucketsOf,
  used: Map<string, number>,
): BlockedOn | undefined {
  if (context.paused.includes(slot.vqueue)) return 'vqueue-paused';
  const mine = buckets(slot.limitKey);
  for (const { rule, bucket } of mine) {
    if (rule.concurrency !== undefined && (used.get(bucket) ?? 0) >= rule.concurrency) return 'limit-key-concurrency';
  }
  for (const { rule, bucket } of mine) {
    if (rule.rate !== undefined && refill(context.tokens[bucket], rule.rate, now) < 1) return 'limit-key-throttling';
  }
  return undefined;
}

/** What keeps a waiter from running, given the current holders and tokens; undefined: it may run. */
export function blockedOn(context: LimiterContext, slot: Slot, now: number): BlockedOn | undefined {
  const buckets = bucketsOf(context);
  return reason(context, slot, now, buckets, usage(context, buckets));
}

/** How many of `keys` (limit keys) fall into `bucket`. */
function countIn(buckets: BucketsOf, keys: Iterable<string | undefined>, bucket: string): number {
  let n = 0;
  for (const k of keys) if (buckets(k).some((b) => b.bucket === bucket)) n++;
  return n;
}

/**
 * The first rule whose `backlog` a new waiter with `limitKey` would overflow, if any. It counts
 * the waiters in the rule's bucket and those on their way (`coming`: the limit keys of
 * invocations stored, or being stored, that have not asked yet), less the bucket's free slots
 * while nobody waits in it (those start at once).
 */
export function backlogFull(
  context: LimiterContext,
  limitKey: string | undefined,
  coming: ReadonlyArray<string | undefined>,
): FlowRule | undefined {
  const buckets = bucketsOf(context);
  const bounded = buckets(limitKey).filter(({ rule }) => rule.backlog !== undefined);
  if (bounded.length === 0) return undefined;
  const used = usage(context, buckets);
  const waitingKeys = context.waiting.map((s) => s.limitKey);
  for (const { rule, bucket } of bounded) {
    const waiting = countIn(buckets, waitingKeys, bucket);
    const free =
      waiting === 0 && rule.concurrency !== undefined ? Math.max(0, rule.concurrency - (used.get(bucket) ?? 0)) : 0;
    if (waiting + countIn(buckets, coming, bucket) - free >= rule.backlog!) return rule;
  }
  return undefined;
}

/** The backlog bound that waiters with `limitKey` are closest to: its limit and the waiters in its bucket. */
export function backlogUse(
  context: LimiterContext,
  limitKey: string | undefined,
): { limit: number; used: number } | undefined {
  const buckets = bucketsOf(context);
  const waitingKeys = context.waiting.map((s) => s.limitKey);
  let closest: { limit: number; used: number } | undefined;
  for (const { rule, bucket } of buckets(limitKey)) {
    if (rule.backlog === undefined) continue;
    const use = { limit: rule.backlog, used: countIn(buckets, waitingKeys, bucket) };
    if (!closest || use.limit - use.used < closest.limit - closest.used) closest = use;
  }
  return closest;
}

interface Admission {
  context: LimiterContext;
  granted: string[];
  wakeAt?: number;
}

/** Admits waiters by priority, then arrival, while they fit; a waiter that does not fit leaves the order of the others alone. */
function admit(from: LimiterContext, now: number): Admission {
  if (from.waiting.length === 0) return { context: from, granted: [] };
  const buckets = bucketsOf(from);
  const used = usage(from, buckets);
  const tokens = { ...from.tokens };
  const view = { ...from, tokens };
  const admitted: Slot[] = [];
  let waiting: Slot[] = [];
  const started = new Set<string>();
  let wakeAt: number | undefined;
  // Sorted only when someone asked for a priority: most scopes never do.
  const prioritized = from.waiting.some((s) => s.priority !== undefined && s.priority !== PRIORITY.default);
  for (const slot of prioritized ? admissionOrder(from.waiting) : from.waiting) {
    const blocked = reason(view, slot, now, buckets, used);
    if (blocked === 'limit-key-throttling') {
      for (const { rule, bucket } of buckets(slot.limitKey)) {
        if (rule.rate === undefined) continue;
        const missing = 1 - refill(tokens[bucket], rule.rate, now);
        if (missing > 0) wakeAt = Math.min(wakeAt ?? Infinity, now + Math.ceil((missing * 1000) / rule.rate));
      }
    }
    if (blocked) {
      waiting.push(slot);
      continue;
    }
    for (const { rule, bucket } of buckets(slot.limitKey)) {
      used.set(bucket, (used.get(bucket) ?? 0) + 1);
      if (rule.rate !== undefined) tokens[bucket] = { tokens: refill(tokens[bucket], rule.rate, now) - 1, at: now };
    }
    admitted.push({ ...slot, at: now });
    started.add(slot.vqueue);
  }
  if (admitted.length === 0) return { context: from, granted: [], ...(wakeAt !== undefined ? { wakeAt } : {}) };
  // `waiting` stays in arrival order.
  if (prioritized) {
    const left = new Set(waiting);
    waiting = from.waiting.filter((s) => left.has(s));
  }
  const vqueues = { ...from.vqueues };
  for (const id of started) if (vqueues[id]) vqueues[id] = { ...vqueues[id], lastStartAt: now };
  return {
    context: { ...from, tokens, vqueues, running: [...from.running, ...admitted], waiting },
    granted: admitted.map((s) => s.invocationId),
    ...(wakeAt !== undefined ? { wakeAt } : {}),
  };
}

function applied(context: LimiterContext, event: LimiterEvent): LimiterContext {
  const next = { ...context, rules: event.rules };
  switch (event.type) {
    case 'acquire': {
      const known =
        next.running.some((s) => s.invocationId === event.invocationId) ||
        next.waiting.some((s) => s.invocationId === event.invocationId);
      if (known) return next;
      const { vqueue } = event;
      const meta: VqueueMeta = next.vqueues[vqueue.id] ?? {
        service: vqueue.service,
        ...(event.limitKey !== undefined ? { limitKey: event.limitKey } : {}),
        ...(vqueue.lockName !== undefined ? { lockName: vqueue.lockName } : {}),
        createdAt: event.now,
        lastEnqueuedAt: event.now,
        finished: 0,
      };
      const slot: Slot = {
        invocationId: event.invocationId,
        vqueue: vqueue.id,
        at: event.now,
        ...(event.limitKey !== undefined ? { limitKey: event.limitKey } : {}),
        ...(event.priority !== undefined ? { priority: event.priority } : {}),
      };
      return {
        ...next,
        waiting: [...next.waiting, slot],
        vqueues: { ...next.vqueues, [vqueue.id]: { ...meta, lastEnqueuedAt: event.now } },
      };
    }
    case 'release': {
      const held = next.running.find((s) => s.invocationId === event.invocationId);
      const meta = held ? next.vqueues[held.vqueue] : undefined;
      return {
        ...next,
        running: next.running.filter((s) => s.invocationId !== event.invocationId),
        waiting: next.waiting.filter((s) => s.invocationId !== event.invocationId),
        ...(held && meta
          ? {
              vqueues: {
                ...next.vqueues,
                [held.vqueue]: { ...meta, lastFinishAt: event.now, finished: meta.finished + 1 },
              },
            }
          : {}),
      };
    }
    case 'pauseQueue':
      return next.paused.includes(event.vqueue) ? next : { ...next, paused: [...next.paused, event.vqueue] };
    case 'resumeQueue':
      return { ...next, paused: next.paused.filter((q) => q !== event.vqueue) };
    case 'tick':
      return next;
  }
}

export const limiterMachine = setup({
  types: {
    context: {} as LimiterContext,
    events: {} as LimiterEvent,
    input: {} as { scope: string },
  },
  actions: {
    // Effects: declared so the graph shows them; the runtime performs them after the commit.
    grant: (_, _params: { invocationId: string }) => {},
    wakeAt: (_, _params: { dueAt: number }) => {},
  },
  guards: {
    someoneWaits: ({ context }) => context.waiting.length > 0,
    someoneRuns: ({ context }) => context.running.length > 0,
  },
}).createMachine({
  id: 'limiter',
  context: ({ input }) => ({
    scope: input.scope,
    rules: [],
    running: [],
    waiting: [],
    paused: [],
    vqueues: {},
    tokens: {},
  }),
  initial: 'idle',
  // Every event admits what fits, then the state says what is left.
  on: {
    '*': {
      target: '.settling',
      actions: enqueueActions(({ context, event, enqueue }) => {
        const { context: next, granted, wakeAt } = admit(applied(context, event), event.now);
        enqueue.assign(() => next);
        for (const invocationId of granted) enqueue({ type: 'grant', params: { invocationId } });
        if (wakeAt !== undefined) enqueue({ type: 'wakeAt', params: { dueAt: wakeAt } });
      }),
    },
  },
  states: {
    settling: {
      always: [
        { guard: 'someoneWaits', target: 'blocked' },
        { guard: 'someoneRuns', target: 'running' },
        { target: 'idle' },
      ],
    },
    /** No slot held, nobody waiting. */
    idle: {},
    /** Slots held, nobody waiting. */
    running: {},
    /** Someone waits: for a slot, a token, or a resume. */
    blocked: {},
  },
});

/** How the runtime steps this machine (./stepper.ts). */
export const limiterSteps = new Stepper(limiterMachine, { scope: 'sample' });
