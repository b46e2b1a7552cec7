/**
 * Delivering outbox messages (design.md, "Scaling past one machine"): a commit writes them,
 * this delivers them to their invocation — creating a callee, storing a call's result or a
 * signal in a journal — and removes them once that is stored. Delivery is idempotent, so
 * recovery re-drives whatever an outbox still holds.
 *
 * It also knows which invocations exist only as an undelivered `invoke` message: a caller
 * learns its callee's id in the commit that writes the message, and may attach to it at once.
 */
import { encodeNotification, MessageType, type Notification } from '../../protocol/messages.js';
import type { Registry } from '../../registry/registry.js';
import { isWorkflowRun, type EffectiveHandler } from '../../registry/types.js';
import { Fenced, type OutboxMessage, type Store } from '../../store/types.js';
import { isWorkflowRunContext, RecordKind } from '../../model/persisted.js';
import { completionResult, messageResult, NOT_FOUND } from '../kernel/results.js';
import type { JournalView } from '../kernel/journal.js';
import type { ExtraWrites } from '../kernel/effects.js';
import type { Caller, OutboxBody } from '../../model/outbox.js';
import type { InvokeRequest, Placement, RemoteDelivery } from '../types.js';
import type { ActorCache } from './actors.js';
import type { Invocations } from './invocations.js';
import type { Admission } from './admission.js';
import type { RetryScheduler } from './retry.js';
import { outboxMessages } from '../../telemetry/metrics.js';

export interface DeliveryDeps {
  readonly store: Store;
  readonly registry: Registry;
  readonly actors: ActorCache;
  readonly invocations: Invocations;
  /** What a request implies, decided once (services/admission.ts). */
  admit(req: InvokeRequest, handler?: EffectiveHandler): Admission;
  readonly retry: RetryScheduler;
  /** Which partitions this node owns. */
  readonly placement: Placement;
  /** Applies a message on the owner of its target partition (runtime/operations.ts): `here` on this node, else forwarded. */
  onOwner(target: number, op: RemoteDelivery, message: OutboxMessage): Promise<void>;
  /** The CANCEL signal is an operator cancel (services/operator.ts); a missing or completed target is fine. */
  cancel(invocationId: string): Promise<void>;
}

type InvokeBody = Extract<OutboxBody, { kind: 'invoke' }>;
type SignalBody = Extract<OutboxBody, { kind: 'signal' }>;

const CANCEL_SIGNAL = 1;

interface Waiter {
  resolve(): void;
  reject(err: Fenced): void;
}

/** A callee known only as an `invoke` message in the outbox of `partition`. */
interface Undelivered {
  partition: number;
  waiting: Waiter[];
}

/** Makes one named signal's delivery idempotent: a journal may hold many signals of one name. */
interface DeliveryMark {
  partition: number;
  messageId: string;
}

export class Delivery {
  /** Callees whose `invoke` message is committed and not delivered yet, with who waits for their creation. */
  private readonly undelivered = new Map<string, Undelivered>();
  /**
   * Messages being delivered (`partition/id`), each with the token of its delivery: handing one
   * in again (recovery) does not deliver it twice at once, and a delivery that outlived its
   * partition's stay here (`forgetPartition`) does not unmark the one a later recovery started.
   */
  private readonly inFlight = new Map<string, symbol>();

  constructor(private readonly deps: DeliveryDeps) {}

  /** Messages were committed (or found in an outbox at start-up): deliver them. */
  deliver(partition: number, messages: OutboxMessage[]): void {
    // Callees first: a signal in the same batch (a handler cancelling what it just sent) waits for them.
    for (const m of messages) {
      const body = m.body as OutboxBody;
      if (body.kind === 'invoke' && !this.undelivered.has(body.invocationId))
        this.undelivered.set(body.invocationId, { partition, waiting: [] });
    }
    for (const m of messages) {
      const key = `${partition}/${m.id}`;
      if (this.inFlight.has(key)) continue;
      const token = Symbol(key);
      this.inFlight.set(key, token);
      const done = () => {
        if (this.inFlight.get(key) === token) this.inFlight.delete(key);
        outboxMessages.set(this.inFlight.size);
      };
      const deliver = async () => {
        try {
          await this.attempt(partition, m);
        } catch (err) {
          // The sending partition moved to another node, whose recovery delivers the message
          // again: whatever waited here for its callee is refused in turn, so that a cancel
          // sent after it comes from there too, after the callee, and not from here, where a
          // callee it forgot could be created again by that redelivery.
          if (!(err instanceof Fenced && err.partition === partition && !this.deps.placement.owns(partition)))
            throw err;
          this.refuseWaiters(m, err);
        }
        done();
      };
      deliver().catch((err: unknown) => this.deps.retry.later(`outbox ${m.id}`, err, deliver, partition));
    }
    outboxMessages.set(this.inFlight.size);
  }

  /** Whether the invocation exists only as an undelivered `invoke` message. */
  isUndelivered(id: string): boolean {
    return this.undelivered.has(id);
  }

  /** Resolves once an undelivered callee is created (at once for any other id). */
  whenCreated(id: string): Promise<void> {
    const callee = this.undelivered.get(id);
    if (!callee) return Promise.resolve();
    return new Promise((resolve, reject) => callee.waiting.push({ resolve, reject }));
  }

  /**
   * The partition left this node: deliveries of its outbox that were dropped on the way (their
   * retries went with it) may be handed in again by its next recovery here, and whatever
   * waited for its callees is refused (its next owner delivers them, and what waited).
   */
  forgetPartition(partition: number): void {
    const prefix = `${partition}/`;
    for (const key of this.inFlight.keys()) if (key.startsWith(prefix)) this.inFlight.delete(key);
    outboxMessages.set(this.inFlight.size);
    const moved = new Fenced(partition, 'the partition moved to another node');
    for (const [id, callee] of this.undelivered)
      if (callee.partition === partition) for (const w of this.takeWaiters(id)) w.reject(moved);
  }

  /**
   * Appends a notification unless the journal already has one for the same completion id or
   * signal index, or, for a named signal, this very message was delivered (`once`), with
   * `write` in the same commit: delivery is idempotent. A signal for an invocation that has not
   * started is dropped, as Restate does. Resolves false when nothing was stored because the
   * invocation is not live (completed, unknown, or not started for a signal).
   */
  async notify(id: string, type: number, n: Notification, write?: ExtraWrites, once?: DeliveryMark): Promise<boolean> {
    const r = await this.deps.actors.with(id, async (actor) => {
      if (actor.status === 'completed') return false;
      const isSignal = n.signalId !== undefined || n.signalName !== undefined;
      // Signals reach only invocations that have started and not ended; Restate drops the others.
      if (isSignal && !actor.hasTag('signallable')) return false;
      if (await this.delivered(actor.journal, n, once)) return true;
      const mark = once ? [{ kind: RecordKind.signalDelivery, key: once.messageId, value: true }] : [];
      await actor.commit({
        entries: [{ type, payload: encodeNotification(n) }],
        write: { ...write, records: [...(write?.records ?? []), ...mark] },
      });
      return true;
    });
    return r.found && r.value;
  }

  private async delivered(journal: JournalView, n: Notification, once: DeliveryMark | undefined): Promise<boolean> {
    if (n.completionId !== undefined) return journal.completions.has(n.completionId);
    if (n.signalId !== undefined) return journal.signals.has(n.signalId);
    return (
      once !== undefined &&
      (await this.deps.store.getRecord(once.partition, RecordKind.signalDelivery, once.messageId)) !== undefined
    );
  }

  private async attempt(partition: number, message: OutboxMessage): Promise<void> {
    const body = message.body as OutboxBody;
    const target = this.deps.actors.partitionOf(body.invocationId);
    // A signal waits for a callee sent before it, which only the sender's node knows about.
    if (body.kind === 'signal') await this.whenCreated(body.invocationId);
    await this.route(target, 'deliver', message);
    await this.deps.store.commit({ partition, outboxRemove: [message.id] });
    // Stored where it goes, which may be another node: this node's index of undelivered callees
    // (which the signals and attaches sent from here wait on) learns it from the answer. Only
    // once the message is gone: a cancel that waited for its callee must not forget it while a
    // retry or a recovery could still deliver the message, and create the callee again.
    this.settled(message);
    // The message is gone, so is the need to recognise it; a crash before this leaves one small record.
    if (body.kind === 'signal' && body.signalName !== undefined) await this.route(target, 'forget', message);
  }

  /** Applies the message where its target partition is owned: here (`here`), or on the owner. */
  private route(target: number, op: RemoteDelivery, message: OutboxMessage): Promise<void> {
    return this.deps.onOwner(target, op, message);
  }

  /** Does `op` for a message whose target partition this node owns (also for other nodes). */
  async here(op: RemoteDelivery, message: OutboxMessage): Promise<void> {
    const body = message.body as OutboxBody;
    const target = this.deps.actors.partitionOf(body.invocationId);
    if (!this.deps.placement.owns(target))
      throw new Fenced(target, 'the message reached a node that does not own its target');
    if (op === 'forget') {
      await this.deps.store.commit({
        partition: target,
        records: [{ kind: RecordKind.signalDelivery, key: message.id, value: null }],
      });
      return;
    }
    switch (body.kind) {
      case 'invoke':
        await this.invoke(body);
        break;
      case 'complete':
        await this.notify(body.invocationId, body.notificationType ?? MessageType.CallCompletionNotification, {
          completionId: body.completionId,
          ...messageResult(body),
        });
        break;
      case 'signal':
        await this.signal(body, message.id);
        break;
      default:
        throw new Error(`unknown outbox message kind '${(body as { kind: string }).kind}'`);
    }
  }

  private async signal(body: SignalBody, messageId: string): Promise<void> {
    const result = messageResult(body);
    if (body.signalName !== undefined) {
      const once = { partition: this.deps.actors.partitionOf(body.invocationId), messageId };
      await this.notify(
        body.invocationId,
        MessageType.SignalNotification,
        { signalName: body.signalName, ...result },
        undefined,
        once,
      );
    } else if (body.signalId === CANCEL_SIGNAL) {
      // Restate treats a CANCEL sent by a handler (ctx.cancel) as an operator's cancel: an
      // invocation that has not started yet is then never run.
      await this.deps.cancel(body.invocationId);
    } else {
      await this.notify(body.invocationId, MessageType.SignalNotification, { signalId: body.signalId, ...result });
    }
  }

  /** An `invoke` message is no longer undelivered: whoever waits for its callee goes on. */
  private settled(message: OutboxMessage): void {
    for (const w of this.waitersOf(message)) w.resolve();
  }

  /** An `invoke` message will be delivered by another node: whoever waits here for its callee fails with `err`. */
  private refuseWaiters(message: OutboxMessage, err: Fenced): void {
    for (const w of this.waitersOf(message)) w.reject(err);
  }

  /** The waiters of an `invoke` message's callee, taken out of the index (none for other messages). */
  private waitersOf(message: OutboxMessage): Waiter[] {
    const body = message.body as OutboxBody;
    return body.kind === 'invoke' ? this.takeWaiters(body.invocationId) : [];
  }

  /** The callee `id` leaves the index of undelivered callees: who waited for it. */
  private takeWaiters(id: string): Waiter[] {
    const callee = this.undelivered.get(id);
    this.undelivered.delete(id);
    return callee?.waiting ?? [];
  }

  private async invoke(body: InvokeBody): Promise<void> {
    const existing = await this.deps.actors.persisted(body.invocationId);
    if (existing) {
      // Created by this very message before (a redelivery), or a one-way send: nothing to do.
      const c = existing.context.caller;
      if (!body.caller || (c?.invocationId === body.caller.invocationId && c.completionId === body.caller.completionId))
        return;
      return this.answerCallToExisting(
        body.caller,
        body.invocationId,
        isWorkflowRunContext({ target: body.target, exclusive: existing.context.exclusive }),
      );
    }
    const handler = this.deps.registry.resolveHandler(body.target.service, body.target.handler);
    if (!handler) throw new Error(`callee ${body.target.service}/${body.target.handler} is not registered`);
    const created = await this.deps.invocations.create(
      this.deps.admit(
        {
          target: body.target,
          input: Buffer.from(body.input, 'base64'),
          headers: body.headers,
          retryPolicy: handler.retryPolicy,
          invokedBy: 'service',
          invocationId: body.invocationId,
          ...(body.caller ? { caller: body.caller } : {}),
          ...(body.parent ? { parent: body.parent } : {}),
          ...(body.executeAt !== undefined ? { executeAt: body.executeAt } : {}),
          ...(body.idempotencyKey !== undefined ? { idempotencyKey: body.idempotencyKey } : {}),
        },
        handler,
      ),
    );
    // Another caller created it between the check above and this creation.
    if (created.previous && body.caller)
      await this.answerCallToExisting(body.caller, body.invocationId, isWorkflowRun(handler));
  }

  /**
   * A call named an invocation that exists already (same idempotency key, or a workflow id
   * whose run was submitted before): the caller gets its result, or for a workflow run the
   * reference's 409. The outbox message stays until this is stored, so a crash while waiting
   * only makes the wait start again.
   */
  private async answerCallToExisting(caller: Caller, targetId: string, workflowRun: boolean): Promise<void> {
    const result = workflowRun
      ? { failure: { code: 409, message: 'the workflow method was already invoked' } }
      : await this.deps.invocations
          .attach(targetId)
          .then((done) => (done ? completionResult(done.completion) : { failure: NOT_FOUND }));
    const answer: OutboxBody = {
      kind: 'complete',
      invocationId: caller.invocationId,
      completionId: caller.completionId,
      ...bodyResult(result),
    };
    await this.route(this.deps.actors.partitionOf(caller.invocationId), 'deliver', {
      id: `answer:${targetId}:${caller.invocationId}:${caller.completionId}`,
      body: answer,
    });
  }
}

/** A notification result as an outbox message carries it (base64 value). */
function bodyResult(result: Pick<Notification, 'value' | 'failure'>): {
  value?: string;
  failure?: Notification['failure'];
} {
  if (result.failure) return { failure: result.failure };
  return result.value !== undefined ? { value: Buffer.from(result.value).toString('base64') } : {};
}
