/**
 * What an operator can do to one invocation (the admin API's PATCH /invocations/{id}/…,
 * reference-behavior.md §3.5). Each action is a machine event or a journal entry committed
 * on the invocation's queue, like everything else that changes an invocation.
 */
import { retentionEnd, type InvocationEvent } from '../../../machines/invocation.js';
import { invocationIdToString, newInvocationId, parseInvocationId } from '../../protocol/ids.js';
import {
  codecFor,
  decodeCallCommand,
  decodeInputCommand,
  decodeNotification,
  encodeNotification,
  isCommand,
  isNotification,
  MessageType,
} from '../../protocol/messages.js';
import type { Registry } from '../../registry/registry.js';
import { Conflict, Gone, InvalidRequest, NotFound, Unprocessable } from '../../errors.js';
import type { JournalEntry, Store } from '../../store/types.js';
import type { PersistedInvocation } from '../../model/persisted.js';
import type { InvocationActor } from '../kernel/invocation-actor.js';
import { JournalView } from '../kernel/journal.js';
import { isWorkflowRunContext } from '../../model/persisted.js';
import { timerOf } from '../../model/timers.js';
import type { ActorCache } from './actors.js';
import type { Invocations } from './invocations.js';
import type { Admission } from './admission.js';
import type { EffectiveHandler } from '../../registry/types.js';
import type { InvokeRequest } from '../types.js';

export interface OperatorDeps {
  readonly store: Store;
  readonly registry: Registry;
  readonly actors: ActorCache;
  readonly invocations: Invocations;
  /** What a request implies, decided once (services/admission.ts). */
  admit(req: InvokeRequest, handler?: EffectiveHandler): Admission;
  /**
   * Kills a callee of a killed invocation on the owner of its partition (runtime/operations.ts),
   * which may be another node; one that ended or is gone meanwhile needs nothing.
   */
  killCallee(id: string): Promise<void>;
  now(): number;
}

/**
 * How an operation that did not fail ended: it changed something, it stored a signal the
 * handler has yet to see (a cancel, 202 in Restate), or there was nothing to do. Everything
 * else is a domain error with the reference's text (reference-behavior.md §3.5).
 */
export type Outcome = 'done' | 'appended' | 'noop';

const CANCEL_SIGNAL = 1;
/** restate-server's CANCELED_INVOCATION_ERROR and KILLED_INVOCATION_ERROR. */
const CANCELLED = { code: 409, message: 'canceled' };
const KILLED = { code: 409, message: 'killed' };

const invocationNotFound = (id: string) => new NotFound(`The requested invocation '${id}' does not exist`);
const deploymentNotFound = (id: string) => new NotFound(`The requested deployment '${id}' does not exist`);

/**
 * Live (non-completed) invocations go through `live`, inside their queue; a completed one
 * answers 409 with `completedText` ("was already completed.", ...).
 */
async function withInvocation(
  rt: OperatorDeps,
  id: string,
  completedText: string,
  live: (host: InvocationActor) => Promise<Outcome>,
): Promise<Outcome> {
  const completed = () => new Conflict(`The invocation '${id}' ${completedText}`);
  const r = await rt.actors.with(id, (host) => {
    if (host.status === 'completed') throw completed();
    return live(host);
  });
  if (r.found) return r.value;
  if ((await rt.invocations.output(id)).state === 'completed') throw completed();
  throw invocationNotFound(id);
}

/** The completed invocation an operation works on: 404 when missing, 409 while it runs. */
async function completedInvocation(rt: OperatorDeps, id: string, runningText: string): Promise<PersistedInvocation> {
  const stored = await rt.actors.stored(id);
  if (!stored) throw invocationNotFound(id);
  if (stored.value !== 'completed') throw new Conflict(`The invocation '${id}' ${runningText}`);
  return stored;
}

/**
 * Ends an invocation that has not started, as Restate's `terminate_scheduled_invocation` /
 * `terminate_inboxed_invocation` do: its caller (and whoever attached) gets the failure, and
 * the invocation is deleted in the same commit, so attach and output answer 404 afterwards.
 */
async function forget(
  rt: OperatorDeps,
  host: InvocationActor,
  failure: { code: number; message: string },
): Promise<Outcome> {
  await host.commit({ events: [{ type: 'kill', failure, now: rt.now() }], forget: true });
  return 'done';
}

/**
 * Cancel: the CANCEL signal goes into the journal, so the handler sees it (and can run its
 * compensations); what has not started yet is forgotten (200 in Restate, 202 otherwise).
 */
export function cancel(rt: OperatorDeps, id: string): Promise<Outcome> {
  return withInvocation(rt, id, 'was already completed.', async (host) => {
    if (host.hasTag('notStarted')) return forget(rt, host, CANCELLED);
    if (host.status === 'paused') {
      // What the SDK ends a cancelled handler with (§9.8): Restate resumes a paused invocation to deliver it.
      await host.commit({ events: [{ type: 'kill', failure: { code: 409, message: 'Cancelled' }, now: rt.now() }] });
    } else if (!host.journal.signals.has(CANCEL_SIGNAL)) {
      const payload = encodeNotification({ signalId: CANCEL_SIGNAL, void: true });
      await host.commit({ entries: [{ type: MessageType.SignalNotification, payload }] });
    }
    return 'appended';
  });
}

/** Kill: ends now, no user code runs; the calls it still waits for are killed too. */
export async function kill(rt: OperatorDeps, id: string): Promise<Outcome> {
  let children: string[] = [];
  const outcome = await withInvocation(rt, id, 'was already completed.', async (host) => {
    if (host.hasTag('notStarted')) return forget(rt, host, KILLED);
    children = pendingCallees(host.journal);
    await host.commit({ events: [{ type: 'kill', failure: KILLED, now: rt.now() }] });
    return 'done';
  });
  await Promise.all(children.map((child) => rt.killCallee(child)));
  return outcome;
}

/** Invocations this journal called and has no result of yet. */
function pendingCallees(journal: JournalView): string[] {
  const idOf = new Map<number, string>();
  for (const e of journal.entries) {
    if (e.type !== MessageType.CallInvocationIdCompletionNotification) continue;
    const n = decodeNotification(e.payload);
    if (n.completionId !== undefined && n.invocationId !== undefined) idOf.set(n.completionId, n.invocationId);
  }
  const pending: string[] = [];
  for (const e of journal.entries) {
    if (e.type !== MessageType.CallCommand) continue;
    const c = decodeCallCommand(e.payload);
    const child = idOf.get(c.invocationIdNotificationIdx);
    if (child && !journal.completions.has(c.resultCompletionId)) pending.push(child);
  }
  return pending;
}

export function pause(rt: OperatorDeps, id: string): Promise<Outcome> {
  const notRunning = 'is not running, cannot be paused.';
  return withInvocation(rt, id, notRunning, async (host) => {
    if (host.status === 'paused') return 'noop';
    if (!['running', 'suspended', 'backingOff'].includes(host.status))
      throw new Conflict(`The invocation '${id}' ${notRunning}`);
    await host.commit({ events: [{ type: 'pause', now: rt.now() }] });
    return 'done';
  });
}

/**
 * Resume a paused invocation; a backing-off one retries at once ("If the invocation is backing
 * off due to a retry, this will immediately trigger the retry", the reference's admin API): it
 * takes its `timerDue` now and its retry timer goes in the same commit, as if it had fired.
 * With a deployment, a paused or suspended invocation that is pinned moves to that deployment
 * first (its next attempt runs there).
 */
export async function resume(rt: OperatorDeps, id: string, deployment?: DeploymentChoice): Promise<Outcome> {
  if (deployment?.kind === 'id' && !rt.registry.getDeployment(deployment.id)) throw deploymentNotFound(deployment.id);
  return withInvocation(rt, id, 'is completed, cannot be resumed.', async (host) => {
    const now = rt.now();
    const events: InvocationEvent[] = [];
    if (deployment && deployment.kind !== 'keep') {
      const { target, deploymentId } = host.context;
      if (!['paused', 'suspended'].includes(host.status) || deploymentId === undefined) {
        throw new Conflict(
          `The invocation '${id}' is still running or the deployment id is not pinned yet, deployment id cannot be changed.`,
        );
      }
      const to =
        deployment.kind === 'id'
          ? deployment.id
          : rt.registry.resolveHandler(target.service, target.handler)?.deployment.id;
      if (to === undefined) throw deploymentNotFound(deployment.kind);
      if (to !== deploymentId) events.push({ type: 'pinDeployment', deploymentId: to, now });
    }
    if (host.status === 'paused') events.push({ type: 'resume', now });
    // Backing off: the retry now (the admin API's resume, "Retry now" in the UI), its timer gone in the same commit.
    if (host.hasTag('retryTimer')) {
      await host.commit({ events: [{ type: 'timerDue', now }], write: { timersRemove: [timerOf.retry(id)] } });
      return 'done';
    }
    if (events.length === 0) return 'noop';
    await host.commit({ events });
    return 'done';
  });
}

/** Purge: a completed invocation, its journal and its id are forgotten now. */
export async function purge(rt: OperatorDeps, id: string): Promise<Outcome> {
  await completedInvocation(rt, id, 'is not yet completed.');
  await rt.store.commit({
    partition: rt.actors.partitionOf(id),
    deleteInvocations: [id],
    timersRemove: [timerOf.expire(id)],
  });
  return 'done';
}

/**
 * Purge journal: a completed invocation keeps its result (and its retention), its journal is
 * dropped. The snapshot is written again in the same commit that deletes the invocation's
 * records, and the expiry timer with it, so an expiry that fired in between still purges it.
 */
export async function purgeJournal(rt: OperatorDeps, id: string): Promise<Outcome> {
  const persisted = await completedInvocation(rt, id, 'is not yet completed.');
  await rt.store.commit({
    partition: rt.actors.partitionOf(id),
    deleteInvocations: [id],
    invocations: [{ id, snapshot: persisted, active: false }],
    timersAdd: [{ ...timerOf.expire(id), dueAt: retentionEnd(persisted.context) }],
  });
  return 'done';
}

/** Which deployment a restarted (or resumed) invocation runs on. */
export type DeploymentChoice = { kind: 'latest' } | { kind: 'keep' } | { kind: 'id'; id: string };

export interface RestartOptions {
  /** Keep the old journal up to this entry index (included), with the completions of its commands. */
  from?: number;
  /** Only used with `from` > 0; absent means latest. */
  deployment?: DeploymentChoice;
  /** The new invocation's id (`restartedId`), chosen once by the runtime's face; absent, a new one. */
  newInvocationId?: string;
}

/** A new id for a restart of `id`: in the same partition, so the restart runs where the original did. */
export function restartedId(id: string): string {
  return invocationIdToString(newInvocationId(parseInvocationId(id).partitionKey));
}

export interface Restarted {
  newInvocationId: string;
}

/**
 * The journal to start a restarted invocation with: entries `0..from` of the old one, then the
 * notifications that complete the commands of that prefix (which may come later in the old
 * journal). Undefined when the prefix has a command that never got its completion, or goes
 * past the result (`Output`) or the end.
 */
export function restartPrefix(journal: JournalEntry[], from: number): JournalEntry[] | undefined {
  if (from >= journal.length) return undefined;
  const prefix = journal.slice(0, from + 1);
  const waiting = new Set<number>();
  for (const entry of prefix) {
    if (entry.type === MessageType.OutputCommand) return undefined;
    if (isCommand(entry.type)) for (const id of completionIdsOf(entry)) waiting.add(id);
  }
  const completes = (e: JournalEntry): number | undefined => {
    if (!isNotification(e.type)) return undefined;
    const id = decodeNotification(e.payload).completionId;
    return id !== undefined && waiting.has(id) ? id : undefined;
  };
  for (const entry of prefix) {
    const id = completes(entry);
    if (id !== undefined) waiting.delete(id);
  }
  const completions: JournalEntry[] = [];
  for (const entry of journal.slice(from + 1)) {
    const id = completes(entry);
    if (id === undefined) continue;
    waiting.delete(id);
    completions.push(entry);
  }
  return waiting.size === 0 ? [...prefix, ...completions] : undefined;
}

/** Completion ids a command expects notifications for (field 11, and a call's id notification, field 10). */
function completionIdsOf(entry: JournalEntry): number[] {
  const decoded = codecFor(entry.type)?.decode(entry.payload) as
    { resultCompletionId?: unknown; invocationIdNotificationIdx?: unknown } | undefined;
  const ids: number[] = [];
  for (const v of [decoded?.invocationIdNotificationIdx, decoded?.resultCompletionId])
    if (typeof v === 'number' && v > 0) ids.push(v);
  return ids;
}

/**
 * Restart as new: a completed invocation runs again under a new id (same partition), with the
 * same target and input (its journal's Input entry), optionally keeping a journal prefix.
 * Workflow runs cannot be restarted; a purged journal has no input left (reference §3.5).
 */
export async function restartAsNew(rt: OperatorDeps, id: string, opts: RestartOptions = {}): Promise<Restarted> {
  const old = (await completedInvocation(rt, id, 'is still running.')).context;
  if (isWorkflowRunContext(old)) {
    throw new Unprocessable(
      `Restarting the invocation '${id}' is not supported. Restarting workflows is not supported, and restarting invocations created using the old service protocol.`,
    );
  }
  const journal = await rt.store.readJournal(rt.actors.partitionOf(id), id);
  const input = journal[0];
  if (input?.type !== MessageType.InputCommand) {
    throw new Gone(
      `The invocation '${id}' cannot be restarted because the input is not available. This indicates that the journal was already purged, or not retained at all.`,
    );
  }
  const from = opts.from ?? 0;
  const entries = from === 0 ? [input] : restartPrefix(journal, from);
  if (!entries)
    throw new InvalidRequest(
      `The prefix of the journal '${id}' up to 'from' (included) contains some Commands without respective Completions.`,
    );
  let deploymentId: string | undefined;
  if (from > 0 && opts.deployment?.kind === 'keep') deploymentId = old.deploymentId;
  if (from > 0 && opts.deployment?.kind === 'id') {
    if (!rt.registry.getDeployment(opts.deployment.id)) throw deploymentNotFound(opts.deployment.id);
    deploymentId = opts.deployment.id;
  }
  const { headers, value } = decodeInputCommand(input.payload);
  const newId = opts.newInvocationId ?? restartedId(id);
  // Found, the new id can only be this restart's own (no other request knows it): a try again.
  await rt.invocations.create({
    ...rt.admit({
      target: old.target,
      input: value,
      headers,
      retryPolicy: rt.registry.resolveHandler(old.target.service, old.target.handler)?.retryPolicy ?? old.retryPolicy,
      invokedBy: 'restart_as_new',
      restartedFrom: id,
      invocationId: newId,
      journal: entries,
      ...(deploymentId !== undefined ? { deploymentId } : {}),
      // A scoped invocation restarts in its scope and queue, under the same limit rules.
      ...(old.limitKey !== undefined ? { limitKey: old.limitKey } : {}),
    }),
    once: true,
    ownIfFound: true,
  });
  return { newInvocationId: newId };
}

/** The actions bound to their dependencies, as the admin API calls them. */
/**
 * After a cancel or kill whose commit's outcome was unknown (store/confirmed.ts): what it
 * answered if it landed, read from the store (so from any node); undefined if it did not. The
 * invocation existed when the commit was tried, so one that is gone was forgotten by it.
 */
export async function operatorLanded(
  rt: Pick<OperatorDeps, 'store' | 'actors'>,
  id: string,
  action: 'cancel' | 'kill' | 'pause' | 'purge',
): Promise<Outcome | undefined> {
  const stored = await rt.actors.stored(id);
  if (!stored) return 'done';
  if (action === 'purge') return undefined;
  if (action === 'pause') return stored.value === 'paused' ? 'done' : undefined;
  const { completion } = stored.context;
  const failure = completion && 'failure' in completion ? completion.failure : undefined;
  if (action === 'kill') return failure?.message === KILLED.message ? 'done' : undefined;
  // A cancelled handler ends with the SDK's 'Cancelled' (§9.8); a paused one is ended so at once.
  if (failure) return failure.code === CANCELLED.code && /^cancel/i.test(failure.message) ? 'appended' : undefined;
  const journal = new JournalView(await rt.store.readJournal(rt.actors.partitionOf(id), id));
  return journal.signals.has(CANCEL_SIGNAL) ? 'appended' : undefined;
}

export function operatorActions(deps: OperatorDeps) {
  return {
    cancel: (id: string) => cancel(deps, id),
    kill: (id: string) => kill(deps, id),
    pause: (id: string) => pause(deps, id),
    resume: (id: string, deployment?: DeploymentChoice) => resume(deps, id, deployment),
    purge: (id: string) => purge(deps, id),
    purgeJournal: (id: string) => purgeJournal(deps, id),
    restartAsNew: (id: string, opts?: RestartOptions) => restartAsNew(deps, id, opts),
  };
}
