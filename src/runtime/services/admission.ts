/**
 * Admission: everything an invocation request implies, decided once, where the request enters
 * the runtime. Its id (deterministic for a workflow's run and an idempotency key, model/ids.ts;
 * else new, in its target's partition or one this node owns), its partition, its handler (the
 * registry is asked once), whether it runs under its key's lock, how long it is kept after
 * completing, its scope's flow gate, and its first journal entries. The runtime carries the
 * result to the partition's owner and creates the invocation from it (services/invocations.ts);
 * the actor keeps the handler it was admitted with (invoker/session.ts).
 */
import type { InvocationInput } from '../../../machines/invocation.js';
import { idempotentInvocationId, workflowRunId } from '../../model/ids.js';
import { keyInAt, partitionOfId, targetPartitionKey } from '../../model/partitioning.js';
import { encodeInputCommand, MessageType } from '../../protocol/messages.js';
import { invocationIdToString, newInvocationId, partitionKeyOf, unkeyedPartitionKey } from '../../protocol/ids.js';
import type { Registry } from '../../registry/registry.js';
import { vqueueIdOf } from '../../registry/resource-id.js';
import { completionRetentionOf, isWorkflowRun, type EffectiveHandler } from '../../registry/types.js';
import type { JournalEntry } from '../../store/types.js';
import type { InvokeRequest, Placement } from '../types.js';

/** An admitted request: what creating its invocation needs, computed once. */
export interface Admission {
  id: string;
  partition: number;
  /**
   * Create only if absent: the id is derived from what identifies the request, or was chosen by
   * a node that may send the request again after losing the answer (`forwardable`).
   */
  once: boolean;
  /**
   * Found existing, the invocation is this request's own: an earlier try of this very admission
   * may have created it and lost the answer (a store outage, a forwarded request sent again).
   * It is answered as created, not as `previous`.
   */
  ownIfFound?: boolean;
  /** A workflow's run: a second submission is answered 409 by a call. */
  workflowRun: boolean;
  /** The machine's input (its `now` is the admission's time). */
  input: InvocationInput;
  /** The journal it starts with: Input, or the entries restart-as-new carries over. */
  entries: JournalEntry[];
  /** It starts later (`executeAt` in the future): not under its key's lock at creation. */
  delayed: boolean;
  /**
   * Refused (429, nothing stored) when its scope's backlog is full: a request from outside that
   * waits in its scope now. A call or send of a handler, already in its caller's journal, and
   * a delayed one (it joins the queue only when due) are not refused.
   */
  bounded?: boolean;
  /**
   * The handler it was admitted with; left behind when the admission travels to another node
   * (`forwardable`), which resolves it again.
   */
  handler?: EffectiveHandler;
}

export interface AdmissionDeps {
  readonly registry: Registry;
  readonly placement: Placement;
  readonly partitions: number;
  now(): number;
}

/**
 * Admits a request. `handler`: the one the caller already resolved (the ingress checks the
 * target against it), else it is looked up here.
 */
export function admit(
  deps: AdmissionDeps,
  req: InvokeRequest,
  handler = deps.registry.resolveHandler(req.target.service, req.target.handler),
): Admission {
  const now = deps.now();
  const workflowRun = isRunOfWorkflow(req, handler);
  const derived = derivedId(req, handler);
  const id =
    req.invocationId ??
    derived ??
    invocationIdToString(newInvocationId(targetPartitionKey(req.target) ?? partitionKeyHere(deps, now)));
  const delayed = req.executeAt !== undefined && req.executeAt > now;
  const bounded = req.target.scope !== undefined && !delayed && req.invokedBy === 'ingress';
  return {
    id,
    partition: partitionOfId(id, deps.partitions),
    once: derived !== undefined,
    workflowRun,
    input: inputOf(id, req, handler, now, delayed),
    entries: req.journal ?? [
      {
        type: MessageType.InputCommand,
        payload: encodeInputCommand({ headers: req.headers, value: req.input, name: '' }),
      },
    ],
    delayed,
    ...(bounded ? { bounded } : {}),
    ...(handler ? { handler } : {}),
  };
}

/** A workflow's run names its workflow id: it runs once per id. */
function isRunOfWorkflow(req: InvokeRequest, handler: EffectiveHandler | undefined): boolean {
  return handler !== undefined && isWorkflowRun(handler) && req.target.key !== undefined;
}

/** The id of a request that must exist only once (a workflow's run, an idempotency key), derived from what identifies it. */
export function derivedId(req: InvokeRequest, handler: EffectiveHandler | undefined): string | undefined {
  const { service, handler: name, key, scope } = req.target;
  if (isRunOfWorkflow(req, handler)) return workflowRunId(service, key!, scope);
  return req.idempotencyKey === undefined
    ? undefined
    : idempotentInvocationId(service, key, name, req.idempotencyKey, scope);
}

/**
 * The admission tried again after an earlier try's answer was lost: created only if absent, and,
 * found, its own when that try may have made it (`mayHaveCreated`), or when its id is new (no
 * other request can have made it).
 */
export function againAfterLoss(a: Admission, mayHaveCreated: boolean): Admission {
  return { ...a, once: true, ownIfFound: a.ownIfFound === true || mayHaveCreated || !a.once };
}

/**
 * The admission as it travels to the partition's owner: the forwarding node may send it again
 * after losing the answer (`againAfterLoss`), and the owner resolves its handler.
 */
export function forwardable(a: Admission): Admission {
  const { handler: _handler, ...rest } = againAfterLoss(a, false);
  return rest;
}

/** A partition key of a partition this node owns, so an unkeyed invocation runs here; any when it owns none yet. */
function partitionKeyHere(deps: AdmissionDeps, now: number): bigint {
  const owned = deps.placement.owned();
  if (owned.length === 0) return unkeyedPartitionKey(now);
  return keyInAt(owned[Math.floor(Math.random() * owned.length)]!, deps.partitions, now);
}

/** Exclusive handlers run one at a time per key: a virtual object's non-shared handlers, a workflow's `run`. */
export function isExclusive(handler: EffectiveHandler): boolean {
  if (handler.service.ty === 'VirtualObject') return handler.handler.ty !== 'Shared';
  return isWorkflowRun(handler);
}

function inputOf(
  id: string,
  req: InvokeRequest,
  handler: EffectiveHandler | undefined,
  now: number,
  delayed: boolean,
): InvocationInput {
  const exclusive = handler !== undefined && isExclusive(handler) && req.target.key !== undefined;
  const idempotencyKey = req.idempotencyKey ?? req.autoIdempotencyKey;
  // Pinned now unless it starts later: the first attempt would pin the same deployment, and
  // folding that into the creating commit saves a machine transition per invocation.
  const deploymentId = req.deploymentId ?? (!delayed ? handler?.deployment.id : undefined);
  return {
    id,
    target: req.target,
    invokedBy: req.invokedBy,
    retryPolicy: req.retryPolicy,
    now,
    ...(exclusive ? { exclusive } : {}),
    // The auto key of the ingress does not count for retention (reference §2.5).
    ...(handler ? { completionRetention: completionRetentionOf(handler, req.idempotencyKey !== undefined) } : {}),
    ...(req.caller ? { caller: req.caller } : {}),
    ...(req.parent ? { parent: req.parent } : {}),
    ...(req.subscriptionId !== undefined ? { subscriptionId: req.subscriptionId } : {}),
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    ...(req.executeAt !== undefined ? { executeAt: req.executeAt } : {}),
    ...(req.restartedFrom !== undefined ? { restartedFrom: req.restartedFrom } : {}),
    ...(deploymentId !== undefined ? { deploymentId } : {}),
    ...(req.traceparent ? { traceparent: req.traceparent } : {}),
    ...flowOf(req, exclusive),
  };
}

/** A scoped invocation waits for its scope's limiter; its virtual queue is named by service, scope, limit key and lock. */
function flowOf(req: InvokeRequest, exclusive: boolean): Partial<InvocationInput> {
  const { scope, service, key } = req.target;
  if (scope === undefined) return {};
  const lockName = exclusive ? `${service}/${key!}` : null;
  const vqueueId = vqueueIdOf(partitionKeyOf(scope), [service, scope, req.limitKey ?? null, lockName]);
  return {
    gated: true,
    vqueueId,
    ...(req.limitKey !== undefined ? { limitKey: req.limitKey } : {}),
    ...(req.priority !== undefined ? { priority: req.priority } : {}),
  };
}
