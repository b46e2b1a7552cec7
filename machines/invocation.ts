/**
 * The lifecycle of one invocation.
 *
 * Pure: no I/O, no clock, no imports from src/. Every event carries `now`; every effect is an
 * action *as data* (`startAttempt`, `armTimer`, `respond`, ...) that the runtime performs only
 * after it has committed the snapshot this transition produced (design.md, "The invariant").
 * The machine never owns time: a delay is an `armTimer` effect, and the store delivers the
 * matching event (`timerDue`) when it is due, also after a restart.
 *
 * State names follow Restate's `sys_invocation.status` values (reference-behavior.md §3.6):
 * scheduled, running, suspended, backingOff (`backing-off`), paused, completed.
 */
import { assign, setup, type SnapshotFrom } from 'xstate';
import { FlatStepper } from './stepper.js';

export interface RetryPolicy {
  /** Delay before the first retry (ms). */
  initialInterval: number;
  exponentiationFactor: number;
  /** Attempts including the first one; `null` = unlimited. */
  maxAttempts: number | null;
  maxInterval: number;
  onMaxAttempts: 'Pause' | 'Kill';
}

export interface Failure {
  code: number;
  message: string;
  metadata?: Array<{ key: string; value: string }>;
  stacktrace?: string;
}

/** The outcome of a completed invocation; `value` is base64 so the snapshot stays JSON. */
export type Completion = { ok: string } | { failure: Failure };

export interface Target {
  service: string;
  handler: string;
  /** Object key or workflow id; absent for plain services. */
  key?: string;
  serviceTy: 'Service' | 'VirtualObject' | 'Workflow';
  /** Flow-control scope (api-spec §1.9): a workflow id or object key is one per scope. */
  scope?: string;
}

export interface AttemptFailure extends Failure {
  relatedCommandIndex?: number;
  relatedCommandName?: string;
  relatedCommandType?: number;
  /** The SDK's `next_retry_delay`: overrides the policy for the next retry only. */
  nextRetryDelay?: number;
  /** v7 `ErrorMessage.behavior`. */
  behavior?: 'retry' | 'pause' | 'fail';
  /** Restate's doc code for the failure kind, e.g. RT0007. */
  errorCode?: string;
}

/** What a suspended invocation waits for: v6 flat sets, or a v7 future tree (opaque here). */
export interface Awaiting {
  completions: number[];
  signals: number[];
  namedSignals: string[];
  future?: unknown;
}

export interface InvocationInput {
  id: string;
  target: Target;
  invokedBy: 'ingress' | 'service' | 'restart_as_new' | 'subscription';
  /** The subscription whose message created it (sys_invocation.invoked_by_subscription_id). */
  subscriptionId?: string;
  /** The completed invocation this one restarts (admin restart-as-new). */
  restartedFrom?: string;
  /** Pinned before the first attempt (restart-as-new keeping the old deployment). */
  deploymentId?: string;
  /** Where the result goes when another invocation called this one. */
  caller?: { invocationId: string; completionId: number };
  /** The invocation whose handler called or sent this one (sys_invocation.invoked_by_*). */
  parent?: { invocationId: string; target: Target };
  idempotencyKey?: string;
  retryPolicy: RetryPolicy;
  /** Epoch ms at which to start; absent or past means now. */
  executeAt?: number;
  /**
   * Runs under its key's exclusive lock (virtual-object exclusive handler, workflow `run`):
   * it may only run once machines/object-key.ts granted the lock.
   */
  exclusive?: boolean;
  /** How long a completed invocation stays readable (and deduplicates), then it is purged. */
  completionRetention?: number;
  /** Holds its key's lock (granted in the creating commit, or later by `lockGranted`). */
  lockHeld?: boolean;
  /** W3C trace context of what created it (the ingress request's span): the parent of its attempts' spans. */
  traceparent?: string;
  /** One or two `/`-separated levels under the scope; the limit rules count per value. */
  limitKey?: string;
  /** Among its scope's waiters, lower starts first (machines/limiter.ts `PRIORITY`). */
  priority?: number;
  /**
   * Runs only once its scope's limiter (machines/limiter.ts) gave it a slot: a scoped
   * invocation with vqueues enabled. Its virtual queue is `vqueueId`.
   */
  gated?: boolean;
  vqueueId?: string;
  /** Holds a slot of its scope's limiter (given after its creation: `slotGranted`). */
  slotHeld?: boolean;
  now: number;
}

export interface InvocationContext extends Omit<InvocationInput, 'executeAt' | 'now'> {
  createdAt: number;
  modifiedAt: number;
  scheduledStartAt?: number;
  runningAt?: number;
  /** When the latest attempt started. */
  lastStartAt?: number;
  completedAt?: number;
  /** Failed attempts so far (the counter is not reset by resume, as in Restate). */
  retryCount: number;
  lastFailure?: AttemptFailure & { at: number };
  nextRetryAt?: number;
  awaiting?: Awaiting;
  completion?: Completion;
  deploymentId?: string;
}

/** When a timer armed by the machine is due, the store delivers `timerDue` (or purges, for `expire`). */
export interface ArmTimer {
  kind: 'start' | 'retry' | 'expire';
  dueAt: number;
}

/**
 * The effects a transition asks for, as data: the runtime commits the transition, then performs
 * them (design.md, "The invariant"). Each is one of the machine's actions (`effectActions`,
 * declared so the graph shows them, doing nothing here); src/runtime/kernel/effects.ts says
 * what each becomes in the store, src/runtime/services/after-commit.ts what each does.
 */
export type InvocationEffect =
  | { type: 'startAttempt' }
  | { type: 'armTimer'; params: ArmTimer }
  /** Ask the key's lock for this invocation (it waits in `pending` until granted). */
  | { type: 'requestLock' }
  /** Ask its scope's limiter for a slot (it waits in `pending` until granted). */
  | { type: 'requestSlot' }
  /** Pass the key's lock on, and the scope's slot; in the same commit as the completion. */
  | { type: 'releaseLock' }
  /** Answer whoever waits for the result (callers, attach). */
  | { type: 'respond' };

const declared = () => {};
const effectActions = {
  startAttempt: declared,
  armTimer: (_: unknown, _params: ArmTimer) => {},
  requestLock: declared,
  requestSlot: declared,
  releaseLock: declared,
  respond: declared,
} satisfies Record<InvocationEffect['type'], unknown>;

/** The effects among the actions a step collected (`invocationSteps`), in order; built-in actions such as `assign` are left out. */
export function invocationEffects(actions: ReadonlyArray<{ type: string; params?: unknown }>): InvocationEffect[] {
  return actions
    .filter((a) => a.type in effectActions)
    .map(
      (a) =>
        (a.type === 'armTimer' ? { type: a.type, params: a.params as ArmTimer } : { type: a.type }) as InvocationEffect,
    );
}

/**
 * What the runtime asks of a state, answered by the machine (XState tags on its states):
 * - `waiting`: it only waits for something from outside (a notification, a timer, an operator)
 *   and loses nothing by leaving memory; not `backingOff`, whose failures since the journal last
 *   grew are kept in memory only (Start field 7, which an SDK's run retry policy counts on);
 * - `mustAct`: it must act at once after a restart (an attempt, a lock or slot to ask for);
 * - `signallable`: it has started and not ended, so a signal reaches its journal;
 * - `notStarted`: it has not started; a cancel or kill frees it;
 * - `startTimer` / `retryTimer`: its start / retry timer is what it waits for.
 */
export type InvocationTag = 'waiting' | 'mustAct' | 'signallable' | 'notStarted' | 'startTimer' | 'retryTimer';

export type InvocationEvent =
  | { type: 'timerDue'; now: number }
  | { type: 'lockGranted'; now: number }
  | { type: 'slotGranted'; now: number }
  | { type: 'suspend'; awaiting: Awaiting; now: number }
  | { type: 'wake'; now: number }
  | { type: 'attemptFailed'; failure: AttemptFailure; now: number }
  | { type: 'complete'; completion: Completion; now: number }
  | { type: 'pinDeployment'; deploymentId: string; now: number }
  /** Operator actions (admin API): end at once with a failure, or stop/restart attempts. */
  | { type: 'kill'; failure: Failure; now: number }
  | { type: 'pause'; now: number }
  | { type: 'resume'; now: number };

/** The retry delay before attempt `retryCount + 1`, or undefined when the policy is exhausted. */
export function retryDelay(policy: RetryPolicy, retryCount: number): number | undefined {
  if (policy.maxAttempts !== null && retryCount >= policy.maxAttempts) return undefined;
  const exp = policy.initialInterval * Math.pow(policy.exponentiationFactor, Math.max(0, retryCount - 1));
  return Math.min(exp, policy.maxInterval);
}

/** When a completed invocation is purged, and its idempotency key or workflow id is free again. */
export function retentionEnd(
  context: Pick<InvocationContext, 'completedAt' | 'modifiedAt' | 'completionRetention'>,
): number {
  return (context.completedAt ?? context.modifiedAt) + (context.completionRetention ?? 0);
}

const failureOutcome = (context: InvocationContext, failure: AttemptFailure): 'retry' | 'pause' | 'kill' => {
  if (failure.behavior === 'pause') return 'pause';
  if (failure.behavior === 'fail') return 'kill';
  if (retryDelay(context.retryPolicy, context.retryCount + 1) !== undefined) return 'retry';
  return context.retryPolicy.onMaxAttempts === 'Kill' ? 'kill' : 'pause';
};

export const invocationMachine = setup({
  types: {
    context: {} as InvocationContext,
    events: {} as InvocationEvent,
    input: {} as InvocationInput,
    tags: {} as InvocationTag,
  },
  actions: effectActions,
  guards: {
    delayed: ({ context }) => context.scheduledStartAt !== undefined,
    waitsForLock: ({ context }) => context.exclusive === true,
    /** Exclusive, and the creating commit did not get it the key's lock: it queues. */
    lockNotYetHeld: ({ context }) => context.exclusive === true && context.lockHeld !== true,
    /** Flow-controlled, and no slot of its scope's limiter yet: it waits for one. */
    slotNotYetHeld: ({ context }) => context.gated === true && context.slotHeld !== true,
    shouldRetry: ({ context, event }) =>
      event.type === 'attemptFailed' && failureOutcome(context, event.failure) === 'retry',
    shouldPause: ({ context, event }) =>
      event.type === 'attemptFailed' && failureOutcome(context, event.failure) === 'pause',
  },
}).createMachine({
  id: 'invocation',
  context: ({ input }) => {
    const { executeAt, now, ...rest } = input;
    return {
      ...rest,
      createdAt: now,
      modifiedAt: now,
      retryCount: 0,
      ...(executeAt !== undefined && executeAt > now ? { scheduledStartAt: executeAt } : {}),
    };
  },
  initial: 'created',
  on: {
    // Any state but `completed` (final: it takes no events) can be ended by an operator.
    kill: {
      target: '.completed',
      actions: assign({
        completion: ({ event }) => ({ failure: event.failure }),
        completedAt: ({ event }) => event.now,
        modifiedAt: ({ event }) => event.now,
      }),
    },
  },
  states: {
    created: {
      always: [
        { guard: 'delayed', target: 'scheduled' },
        { guard: 'slotNotYetHeld', target: 'pending', actions: 'requestSlot' },
        { guard: 'lockNotYetHeld', target: 'pending' },
        { target: 'running' },
      ],
    },
    scheduled: {
      tags: ['waiting', 'notStarted', 'startTimer'],
      entry: {
        type: 'armTimer',
        params: ({ context }) => ({ kind: 'start' as const, dueAt: context.scheduledStartAt! }),
      },
      on: {
        timerDue: [
          {
            guard: 'slotNotYetHeld',
            target: 'pending',
            actions: [assign({ modifiedAt: ({ event }) => event.now }), 'requestSlot'],
          },
          {
            guard: 'waitsForLock',
            target: 'pending',
            actions: [assign({ modifiedAt: ({ event }) => event.now }), 'requestLock'],
          },
          { target: 'running', actions: assign({ modifiedAt: ({ event }) => event.now }) },
        ],
      },
    },
    /** Queued for its scope's slot, then behind the key's lock (sys_invocation status `pending`). */
    pending: {
      tags: ['mustAct', 'notStarted'],
      on: {
        slotGranted: [
          {
            guard: 'lockNotYetHeld',
            actions: [assign({ slotHeld: true, modifiedAt: ({ event }) => event.now }), 'requestLock'],
          },
          { target: 'running', actions: assign({ slotHeld: true, modifiedAt: ({ event }) => event.now }) },
        ],
        lockGranted: { target: 'running', actions: assign({ lockHeld: true, modifiedAt: ({ event }) => event.now }) },
      },
    },
    running: {
      tags: ['mustAct', 'signallable'],
      entry: [
        assign({
          runningAt: ({ context }) => context.runningAt ?? context.modifiedAt,
          lastStartAt: ({ context }) => context.modifiedAt,
          awaiting: undefined,
        }),
        'startAttempt',
      ],
      on: {
        pinDeployment: { actions: assign({ deploymentId: ({ event }) => event.deploymentId }) },
        pause: { target: 'paused', actions: assign({ modifiedAt: ({ event }) => event.now }) },
        suspend: {
          target: 'suspended',
          actions: assign({ awaiting: ({ event }) => event.awaiting, modifiedAt: ({ event }) => event.now }),
        },
        // A suspension whose awaited notification already arrived: start over at once.
        wake: { target: 'running', reenter: true, actions: assign({ modifiedAt: ({ event }) => event.now }) },
        attemptFailed: [
          {
            guard: 'shouldRetry',
            target: 'backingOff',
            actions: assign(({ context, event }) => {
              const retryCount = context.retryCount + 1;
              const delay = event.failure.nextRetryDelay ?? retryDelay(context.retryPolicy, retryCount)!;
              return {
                retryCount,
                lastFailure: { ...event.failure, at: event.now },
                nextRetryAt: event.now + delay,
                modifiedAt: event.now,
              };
            }),
          },
          {
            guard: 'shouldPause',
            target: 'paused',
            actions: assign(({ context, event }) => ({
              retryCount: context.retryCount + 1,
              lastFailure: { ...event.failure, at: event.now },
              modifiedAt: event.now,
            })),
          },
          {
            target: 'completed',
            actions: assign(({ context, event }) => {
              const { code, message, metadata, stacktrace } = event.failure;
              return {
                retryCount: context.retryCount + 1,
                lastFailure: { ...event.failure, at: event.now },
                completion: {
                  failure: { code, message, ...(metadata ? { metadata } : {}), ...(stacktrace ? { stacktrace } : {}) },
                },
                completedAt: event.now,
                modifiedAt: event.now,
              };
            }),
          },
        ],
        complete: {
          target: 'completed',
          actions: assign({
            completion: ({ event }) => event.completion,
            completedAt: ({ event }) => event.now,
            modifiedAt: ({ event }) => event.now,
          }),
        },
      },
    },
    suspended: {
      tags: ['waiting', 'signallable'],
      on: {
        wake: { target: 'running', actions: assign({ modifiedAt: ({ event }) => event.now }) },
        pause: { target: 'paused', actions: assign({ modifiedAt: ({ event }) => event.now }) },
        // An operator moves it to another deployment (admin resume?deployment=).
        pinDeployment: {
          actions: assign({ deploymentId: ({ event }) => event.deploymentId, modifiedAt: ({ event }) => event.now }),
        },
      },
    },
    backingOff: {
      tags: ['signallable', 'retryTimer'],
      entry: { type: 'armTimer', params: ({ context }) => ({ kind: 'retry' as const, dueAt: context.nextRetryAt! }) },
      on: {
        timerDue: {
          target: 'running',
          actions: assign({ nextRetryAt: undefined, modifiedAt: ({ event }) => event.now }),
        },
        pause: { target: 'paused', actions: assign({ nextRetryAt: undefined, modifiedAt: ({ event }) => event.now }) },
      },
    },
    /** Retries exhausted with onMaxAttempts=Pause, or paused by an operator: waits for resume. */
    paused: {
      tags: ['waiting', 'signallable'],
      on: {
        resume: { target: 'running', actions: assign({ modifiedAt: ({ event }) => event.now }) },
        pinDeployment: {
          actions: assign({ deploymentId: ({ event }) => event.deploymentId, modifiedAt: ({ event }) => event.now }),
        },
      },
    },
    completed: {
      type: 'final',
      entry: [
        assign({ awaiting: undefined, nextRetryAt: undefined }),
        { type: 'releaseLock', params: {} },
        'respond',
        {
          type: 'armTimer',
          params: ({ context }) => ({ kind: 'expire' as const, dueAt: retentionEnd(context) }),
        },
      ],
    },
  },
});

/** How the runtime steps this machine (./stepper.ts). */
export const invocationSteps = new FlatStepper(invocationMachine, {
  id: 'sample',
  target: { service: 'sample', handler: 'sample', serviceTy: 'Service' },
  invokedBy: 'ingress',
  retryPolicy: {
    initialInterval: 0,
    exponentiationFactor: 1,
    maxAttempts: null,
    maxInterval: 0,
    onMaxAttempts: 'Pause',
  },
  now: 0,
});

/** A state of the machine (`created` is left at once: no invocation is stored in it). */
export type InvocationState = SnapshotFrom<typeof invocationMachine>['value'];

const TAGS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(invocationMachine.states).map(([name, node]) => [name, new Set(node.tags)]),
);

/** Whether a state carries a tag; for a stored state value, which has no snapshot to ask. */
export function stateHasTag(state: string, tag: InvocationTag): boolean {
  return TAGS.get(state)?.has(tag) ?? false;
}

/** Restate's status name for a state of this machine (sys_invocation.status). */
export function statusOf(value: string): string {
  switch (value) {
    case 'backingOff':
      return 'backing-off';
    case 'created':
      return 'pending';
    default:
      return value;
  }
}
