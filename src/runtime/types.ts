/**
 * The runtime's shared vocabulary: what callers hand it (an invocation request), what it
 * answers (results), the persisted form of an invocation and the messages one commit leaves
 * for another invocation. Types only; the code that gives them meaning lives in kernel/,
 * invoker/ and services/.
 */
import type { Completion, Failure, InvocationContext, RetryPolicy, Target } from '../../machines/invocation.js';
import type { Header } from '../protocol/messages.js';
import type { JournalEntry } from '../store/types.js';

export type { Logger } from '../telemetry/log.js';

/** Who waits for an invocation's result: a call command of another invocation. */
export interface Caller {
  invocationId: string;
  completionId: number;
}

/** The invocation whose handler called or sent another one: its lineage. */
export interface Parent {
  invocationId: string;
  target: Target;
}

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
  /** Set when the id was chosen earlier (by a caller's journal, or the node that forwarded the request). */
  invocationId?: string;
  /**
   * The id was chosen by the node that received the request and forwarded it here; that node
   * may send it again after losing the answer, so it is created only if absent.
   */
  createOnce?: boolean;
  /** W3C trace context of the request that creates it, when tracing is on. */
  traceparent?: string;
  /** Under `target.scope`: what the limit rules count by (one or two `/`-separated levels). */
  limitKey?: string;
}

export interface InvokeResult {
  invocationId: string;
  /** Set for delayed invocations: when they start. */
  executeAt?: number;
  /** The invocation existed already (same idempotency key, or the workflow id's run). */
  previous: boolean;
}

export interface CompletedInvocation {
  id: string;
  target: Target;
  completion: Completion;
  completedAt: number;
  /** When the completed invocation is purged (its retention ends): `idempotency-expires`. */
  expiresAt: number;
}

export type OutputState = { state: 'missing' } | { state: 'pending' } | ({ state: 'completed' } & CompletedInvocation);

/**
 * The JSON form of an invocation kept in the store (kernel/persisted.ts reads and upgrades
 * it): the machine's state value and context, versioned so that a later release can read it.
 */
export interface PersistedInvocation {
  v: 1;
  value: string;
  context: InvocationContext;
}

/**
 * Messages that one partition's commit records for another invocation (possibly in another
 * partition). They are delivered after the commit and removed once delivered; delivery is
 * idempotent, so recovery can re-drive an outbox after a crash (design.md, "Scaling past one
 * machine").
 */
export type OutboxBody =
  | {
      kind: 'invoke';
      invocationId: string;
      target: Target;
      /** base64 */
      input: string;
      headers: Header[];
      caller?: Caller;
      parent?: Parent;
      executeAt?: number;
      idempotencyKey?: string;
    }
  | {
      /** A result for a waiting command (a call's result, a durable promise), for its journal. */
      kind: 'complete';
      /** The notification to store; a call's result (CallCompletion) when absent. */
      notificationType?: number;
      invocationId: string;
      completionId: number;
      value?: string;
      failure?: Failure;
    }
  | {
      kind: 'signal';
      invocationId: string;
      /** One of the two: a signal index (CANCEL, awakeables), or a named signal's name. */
      signalId?: number;
      signalName?: string;
      value?: string;
      failure?: Failure;
    };

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

/** What one node asks of the owner of a partition (runtime.ts `serve`). */
export type ForwardedOp =
  | 'invoke'
  | 'attach'
  | 'output'
  | 'signal'
  | 'submitStateMutation'
  | 'setVqueuePaused'
  | 'deliver'
  | 'forget'
  | 'subscriptionProgress'
  | `operator.${'cancel' | 'kill' | 'pause' | 'resume' | 'purge' | 'purgeJournal' | 'restartAsNew'}`;

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
