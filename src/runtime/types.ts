/**
 * The runtime's face in types: what callers hand it (an invocation request), what it answers
 * (results), and where each partition's work runs (`Placement`). What it stores is
 * src/model/'s; the code that gives these meaning lives in kernel/, invoker/ and services/.
 */
import type { RetryPolicy, Target } from '../../machines/invocation.js';
import type { CompletedInvocation } from '../model/persisted.js';
import type { Caller, Parent } from '../model/outbox.js';
import type { Header } from '../protocol/messages.js';
import type { JournalEntry } from '../store/types.js';

export type { Logger } from '../telemetry/log.js';

export interface InvokeRequest {
  target: Target;
  input: Uint8Array;
  headers: Header[];
  retryPolicy: RetryPolicy;
  /** Epoch ms; absent means now. */
  executeAt?: number;
  idempotencyKey?: string;
  /**
   * Recorded as the invocation's idempotency key when it has none (the ULID the ingress gives
   * every call and send, reference §2.5); never used to deduplicate or for retention.
   */
  autoIdempotencyKey?: string;
  invokedBy: 'ingress' | 'service' | 'restart_as_new' | 'subscription';
  /** The subscription whose message this is (src/subscriptions/). */
  subscriptionId?: string;
  caller?: Caller;
  /** The invocation whose handler made this request, call or one-way send. */
  parent?: Parent;
  /** Restart-as-new: the old invocation, the journal to start with (Input first; replaces `input`/`headers`), a pinned deployment. */
  restartedFrom?: string;
  journal?: JournalEntry[];
  deploymentId?: string;
  /** Set when the id was chosen earlier (by a caller's journal). */
  invocationId?: string;
  /** W3C trace context of the request that creates it, when tracing is on. */
  traceparent?: string;
  /** Under `target.scope`: what the limit rules count by (one or two `/`-separated levels). */
  limitKey?: string;
  /** Under `target.scope`: its place among the scope's waiters (machines/limiter.ts `PRIORITY`). */
  priority?: number;
}

export interface InvokeResult {
  invocationId: string;
  /** Set for delayed invocations: when they start. */
  executeAt?: number;
  /** The invocation existed already (same idempotency key, or the workflow id's run). */
  previous: boolean;
}

/** What a call answers: the invocation (as `InvokeResult`) and its outcome. */
export interface CallResult extends InvokeResult {
  /** Its outcome; absent for a workflow's run submitted before, or an invocation that is gone. */
  done?: CompletedInvocation;
  /** The outcome was stored before this call came (an idempotent request made again): the answer carries the end of its retention. */
  stored?: boolean;
}

export type OutputState = { state: 'missing' } | { state: 'pending' } | ({ state: 'completed' } & CompletedInvocation);

/**
 * Which partitions this node owns (design.md, "Scaling past one machine"): only those have
 * actors, armed timers, deliveries and recovery here. Work whose partition another node owns
 * is handed to it.
 */
export interface Placement {
  owns(partition: number): boolean;
  /** The partitions owned now; a new invocation without a key gets its id in one of them. */
  owned(): readonly number[];
  /**
   * Runs a runtime operation (`Runtime.serve`) on the node that owns `partition`; resolves
   * with its result, rejects with its error.
   */
  forward(partition: number, op: ForwardedOp, args: unknown[]): Promise<unknown>;
}

/**
 * What one node asks of the owner of a partition (runtime.ts `serve`), and whether the asking
 * node may send it again when the owner's answer was lost: only what does nothing twice
 * (creations are created once by their id, reads, deliveries recognised by their message id).
 */
export const FORWARDED_OPS = {
  create: { resendable: true },
  call: { resendable: true },
  attach: { resendable: true },
  output: { resendable: true },
  signal: { resendable: true },
  submitStateMutation: { resendable: false },
  setVqueuePaused: { resendable: true },
  deliver: { resendable: true },
  forget: { resendable: true },
  subscriptionProgress: { resendable: true },
  // A create resent finds its schedule (409), a trigger would fire twice.
  schedule: { resendable: false },
  'operator.cancel': { resendable: false },
  'operator.kill': { resendable: false },
  'operator.pause': { resendable: false },
  'operator.resume': { resendable: false },
  'operator.purge': { resendable: false },
  'operator.purgeJournal': { resendable: false },
  'operator.restartAsNew': { resendable: false },
} as const satisfies Record<string, { resendable: boolean }>;

export type ForwardedOp = keyof typeof FORWARDED_OPS;

/**
 * The node that owns this partition consumes every subscription (server.ts): with several
 * nodes, two consumers of one source would split its messages and mix up each key's order.
 */
export const SUBSCRIPTIONS_PARTITION = 0;

/** Applying an outbox message where its target partition is owned, or forgetting a named signal's delivery mark. */
export type RemoteDelivery = Extract<ForwardedOp, 'deliver' | 'forget'>;

/** One process owning every partition: the embedded store, or Redis without other nodes. */
export function everyPartition(partitions: number): Placement {
  const all = Array.from({ length: partitions }, (_, p) => p);
  return {
    owns: () => true,
    owned: () => all,
    forward: (partition) => Promise.reject(new Error(`partition ${partition} has no other owner`)),
  };
}

/** What a recovery (start-up, or a partition acquired) found to do. */
export interface Recovered {
  resumed: number;
  redelivered: number;
  mutations: number;
  attaches: number;
}
