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
import { isWorkflowRun } from '../../registry/types.js';
import type { OutboxMessage, Store } from '../../store/types.js';
import { isWorkflowRunContext } from '../kernel/persisted.js';
import { completionResult, messageResult, NOT_FOUND } from '../kernel/results.js';
import type { ExtraWrites } from '../kernel/plan.js';
import type { Caller, OutboxBody } from '../types.js';
import type { ActorCache } from './actors.js';
import type { Invocations } from './invocations.js';
import type { RetryScheduler } from './retry.js';
import { outboxMessages } from '../../telemetry/metrics.js';

export interface DeliveryDeps {
  readonly store: Store;
  readonly registry: Registry;
  readonly actors: ActorCache;
  readonly invocations: Invocations;
  readonly retry: RetryScheduler;
}

type InvokeBody = Extract<OutboxBody, { kind: 'invoke' }>;

export class Delivery {
  /** Callees whose `invoke` message is committed and not delivered yet, with who waits for their creation. */
  private readonly undelivered = new Map<string, Array<() => void>>();
  /** Messages being delivered (`partition/id`): handing one in again (recovery) does not deliver it twice at once. */
  private readonly inFlight = new Set<string>();

  constructor(private readonly deps: DeliveryDeps) {}

  /** Messages were committed (or found in an outbox at start-up): deliver them. */
  deliver(partition: number, messages: OutboxMessage[]): void {
    for (const m of messages) {
      const key = `${partition}/${m.id}`;
      if (this.inFlight.has(key)) continue;
      this.inFlight.add(key);
      const body = m.body as OutboxBody;
      if (body.kind === 'invoke' && !this.undelivered.has(body.invocationId)) this.undelivered.set(body.invocationId, []);
      const deliver = async () => {
        await this.attempt(partition, m);
        this.inFlight.delete(key);
        outboxMessages.set(this.inFlight.size);
      };
      deliver().catch((err: unknown) => this.deps.retry.later(`outbox ${m.id}`, err, deliver));
    }
    outboxMessages.set(this.inFlight.size);
  }

  /** Whether the invocation exists only as an undelivered `invoke` message. */
  isUndelivered(id: string): boolean {
    return this.undelivered.has(id);
  }

  /** Resolves once an undelivered callee is created (at once for any other id). */
  whenCreated(id: string): Promise<void> {
    const waiting = this.undelivered.get(id);
    if (!waiting) return Promise.resolve();
    return new Promise((resolve) => waiting.push(resolve));
  }

  /**
   * Appends a notification unless the journal already has one for the same id (idempotent
   * delivery), with `write` in the same commit. Resolves false when the invocation is not
   * live (completed or unknown): nothing was stored.
   */
  async notify(id: string, type: number, n: Notification, write?: ExtraWrites): Promise<boolean> {
    const r = await this.deps.actors.with(id, async (actor) => {
      if (actor.status === 'completed') return false;
      const j = actor.journal;
      const seen = n.completionId !== undefined ? j.completions.has(n.completionId) : n.signalId !== undefined && j.signals.has(n.signalId);
      if (!seen) await actor.commit({ entries: [{ type, payload: encodeNotification(n) }], ...(write ? { write } : {}) });
      return true;
    });
    return r.found && r.value;
  }

  private async attempt(partition: number, message: OutboxMessage): Promise<void> {
    const body = message.body as OutboxBody;
    switch (body.kind) {
      case 'invoke':
        await this.invoke(body);
        break;
      case 'complete':
        await this.notify(body.invocationId, body.notificationType ?? MessageType.CallCompletionNotification, { completionId: body.completionId, ...messageResult(body) });
        break;
      case 'signal':
        await this.notify(body.invocationId, MessageType.SignalNotification, { signalId: body.signalId, ...messageResult(body) });
        break;
      default:
        throw new Error(`unknown outbox message kind '${(body as { kind: string }).kind}'`);
    }
    await this.deps.store.commit({ partition, outboxRemove: [message.id] });
  }

  private async invoke(body: InvokeBody): Promise<void> {
    await this.createCallee(body);
    const waiting = this.undelivered.get(body.invocationId);
    this.undelivered.delete(body.invocationId);
    for (const resolve of waiting ?? []) resolve();
  }

  private async createCallee(body: InvokeBody): Promise<void> {
    const existing = await this.deps.actors.persisted(body.invocationId);
    if (existing) {
      // Created by this very message before (a redelivery), or a one-way send: nothing to do.
      const c = existing.context.caller;
      if (!body.caller || (c?.invocationId === body.caller.invocationId && c.completionId === body.caller.completionId)) return;
      return this.answerCallToExisting(body.caller, body.invocationId, isWorkflowRunContext({ target: body.target, exclusive: existing.context.exclusive }));
    }
    const handler = this.deps.registry.resolveHandler(body.target.service, body.target.handler);
    if (!handler) throw new Error(`callee ${body.target.service}/${body.target.handler} is not registered`);
    const created = await this.deps.invocations.invoke({
      target: body.target,
      input: Buffer.from(body.input, 'base64'),
      headers: body.headers,
      retryPolicy: handler.retryPolicy,
      invokedBy: 'service',
      invocationId: body.invocationId,
      ...(body.caller ? { caller: body.caller } : {}),
      ...(body.executeAt !== undefined ? { executeAt: body.executeAt } : {}),
      ...(body.idempotencyKey !== undefined ? { idempotencyKey: body.idempotencyKey } : {}),
    });
    // Another caller created it between the check above and this creation.
    if (created.previous && body.caller) await this.answerCallToExisting(body.caller, body.invocationId, isWorkflowRun(handler));
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
      : await this.deps.invocations.attach(targetId).then((done) => (done ? completionResult(done.completion) : { failure: NOT_FOUND }));
    await this.notify(caller.invocationId, MessageType.CallCompletionNotification, { completionId: caller.completionId, ...result });
  }
}
