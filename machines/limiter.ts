/**
 * The flow control of one scope (api-spec §1.9, reference-behavior.md §3.8): which of the
 * scope's invocations may run now.
 *
 * An invocation asks for a slot (`acquire`) before it runs and gives it back when it completes
 * (`release`); a running, suspended or backing-off invocation keeps its slot, as in Restate.
 * A slot is given when every enabled rule matching the invocation's scope and limit key has
 * room: fewer holders in the rule's bucket than its `concurrency`, and a token in its bucket
 * when it has a `rate`. The others wait, and are admitted in arrival order whenever something
 * changes: a release, a rule change, a resume, a token. A paused virtual queue's invocations
 * wait whatever the rules say.
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
}

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
  | ({ type: 'acquire'; invocationId: string; limitKey?: string; vqueue: VqueueRef } & Stamp)
  | ({ type: 'release'; invocationId: string } & Stamp)
  /** Rules changed, or a token is due: admit what can run now. */
  | ({ type: 'tick' } & Stamp)
  | ({ type: 'pauseQueue'; vqueue: string } & Stamp)
  | ({ type: 'resumeQueue'; vqueue: string } & Stamp);

export type LimiterEffect = { type: 'grant'; params: { invocationId: string } } | { type: 'wakeAt'; params: { dueAt: number } };

export function limiterEffects(actions: ReadonlyArray<{ type: string; params?: unknown }>): LimiterEffect[] {
  return actions.filter((a) => a.type === 'grant' || a.type === 'wakeAt') as LimiterEffect[];
}

/** Why a waiting invocation does not run (sys_scheduler.blocked_on). */
export type BlockedOn = 'vqueue-paused' | 'limit-key-concurrency' | 'limit-key-throttling';

/** The rules that apply to an invocation of `scope` with `limitKey`, each with its bucket (the values its pattern covers). */
export function matchingBuckets(rules: FlowRule[], scope: string, limitKey: string | undefined): Array<{ rule: FlowRule; bucket: string }> {
  const values = [scope, ...(limitKey === undefined ? [] : limitKey.split('/'))];
  const out: Array<{ rule: FlowRule; bucket: string }> = [];
  for (const rule of rules) {
    const parts = rule.pattern.split('/');
    if (parts.length > values.length) continue;
    if (parts.every((p, i) => p === '*' || p === values[i])) out.push({ rule, bucket: `${rule.pattern}|${values.slice(0, parts.length).join('/')}` });
  }
  return out;
}

const refill = (bucket: { tokens: number; at: number } | undefined, rate: number, now: number): number =>
  bucket === undefined ? 1 : Math.min(1, bucket.tokens + ((now - bucket.at) * rate) / 1000);

interface Admission {
  context: LimiterContext;
  granted: string[];
  wakeAt?: number;
}

/** What keeps a waiter from running, given the current holders and tokens; undefined: it may run. */
export function blockedOn(context: LimiterContext, slot: Slot, now: number): BlockedOn | undefined {
  if (context.paused.includes(slot.vqueue)) return 'vqueue-paused';
  const buckets = matchingBuckets(context.rules, context.scope, slot.limitKey);
  for (const { rule, bucket } of buckets) {
    if (rule.concurrency === undefined) continue;
    const holders = context.running.filter((r) => matchingBuckets([rule], context.scope, r.limitKey).some((b) => b.bucket === bucket)).length;
    if (holders >= rule.concurrency) return 'limit-key-concurrency';
  }
  for (const { rule, bucket } of buckets) {
    if (rule.rate !== undefined && refill(context.tokens[bucket], rule.rate, now) < 1) return 'limit-key-throttling';
  }
  return undefined;
}

/** Admits waiters in arrival order while they fit; a waiter that does not fit leaves the order of the others alone. */
function admit(from: LimiterContext, now: number): Admission {
  let context = from;
  const granted: string[] = [];
  let wakeAt: number | undefined;
  for (const slot of from.waiting) {
    const blocked = blockedOn(context, slot, now);
    if (blocked === 'limit-key-throttling') {
      for (const { rule, bucket } of matchingBuckets(context.rules, context.scope, slot.limitKey)) {
        if (rule.rate === undefined) continue;
        const missing = 1 - refill(context.tokens[bucket], rule.rate, now);
        if (missing > 0) wakeAt = Math.min(wakeAt ?? Infinity, now + Math.ceil((missing * 1000) / rule.rate));
      }
    }
    if (blocked) continue;
    const tokens = { ...context.tokens };
    for (const { rule, bucket } of matchingBuckets(context.rules, context.scope, slot.limitKey)) {
      if (rule.rate !== undefined) tokens[bucket] = { tokens: refill(tokens[bucket], rule.rate, now) - 1, at: now };
    }
    const meta = context.vqueues[slot.vqueue];
    context = {
      ...context,
      tokens,
      running: [...context.running, { ...slot, at: now }],
      waiting: context.waiting.filter((w) => w.invocationId !== slot.invocationId),
      ...(meta ? { vqueues: { ...context.vqueues, [slot.vqueue]: { ...meta, lastStartAt: now } } } : {}),
    };
    granted.push(slot.invocationId);
  }
  return { context, granted, ...(wakeAt !== undefined ? { wakeAt } : {}) };
}

function applied(context: LimiterContext, event: LimiterEvent): LimiterContext {
  const next = { ...context, rules: event.rules };
  switch (event.type) {
    case 'acquire': {
      const known = next.running.some((s) => s.invocationId === event.invocationId) || next.waiting.some((s) => s.invocationId === event.invocationId);
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
      const slot: Slot = { invocationId: event.invocationId, vqueue: vqueue.id, at: event.now, ...(event.limitKey !== undefined ? { limitKey: event.limitKey } : {}) };
      return { ...next, waiting: [...next.waiting, slot], vqueues: { ...next.vqueues, [vqueue.id]: { ...meta, lastEnqueuedAt: event.now } } };
    }
    case 'release': {
      const held = next.running.find((s) => s.invocationId === event.invocationId);
      const meta = held ? next.vqueues[held.vqueue] : undefined;
      return {
        ...next,
        running: next.running.filter((s) => s.invocationId !== event.invocationId),
        waiting: next.waiting.filter((s) => s.invocationId !== event.invocationId),
        ...(held && meta ? { vqueues: { ...next.vqueues, [held.vqueue]: { ...meta, lastFinishAt: event.now, finished: meta.finished + 1 } } } : {}),
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
  context: ({ input }) => ({ scope: input.scope, rules: [], running: [], waiting: [], paused: [], vqueues: {}, tokens: {} }),
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
      always: [{ guard: 'someoneWaits', target: 'blocked' }, { guard: 'someoneRuns', target: 'running' }, { target: 'idle' }],
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
