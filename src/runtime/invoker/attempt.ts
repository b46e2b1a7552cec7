/**
 * One attempt of an invocation: one HTTP stream to the deployment (service-protocol.md §16b),
 * its lifecycle stepped through machines/attempt.ts.
 *
 * It replays the journal after `Start`, turns the SDK frames that arrive together into one
 * batch on the invocation's queue (one commit per batch), forwards notifications once they are
 * stored, and provokes suspension by half-closing the request after the inactivity timeout
 * (§11). It never decides the invocation's fate: it reports End, Suspension, Error or a broken
 * stream to the invocation's machine.
 *
 * A batch goes to the queue at once, except one of commands that owe the SDK no answer (state
 * writes, output, a Run command): the SDK goes on without waiting, so its next frames, usually
 * Output and End or the run's proposed result, are a moment away. Such a batch waits for them up
 * to LINGER_MS, so a handler that writes state and returns is one commit, not two (one fsync less
 * on each key's serial chain), and a `ctx.run` is one commit, not two. Readers of the key's state
 * never miss the held writes (store/held-writes.ts), and a handler that then waits (an awakeable,
 * a long `ctx.run`) has them stored within LINGER_MS.
 */
import { storedService } from '../../model/state-owner.js';
import { stateExpiryWrites } from '../../model/state-expiry.js';
import { encodeFrame, FrameDecoder, type Frame } from '../../protocol/framing.js';
import {
  decodeNotification,
  encodeProposeRunCompletionAck,
  isCommand,
  isNotification,
  messageName,
  MessageType,
} from '../../protocol/messages.js';
import type { InvocationStream, StreamHandlers, Transport } from '../../protocol/transport.js';
import type { Registry } from '../../registry/registry.js';
import type { HeldWrites } from '../../store/held-writes.js';
import type { Store } from '../../store/types.js';
import { ProtocolCode } from '../../errors.js';
import {
  attemptEffects,
  attemptSteps,
  isStreaming,
  type AttemptEffect,
  type AttemptEvent,
} from '../../../machines/attempt.js';
import type { InvocationContext, InvocationEvent } from '../../../machines/invocation.js';
import type { SnapshotFrom } from 'xstate';
import type { attemptMachine } from '../../../machines/attempt.js';
import type { AttemptHandle, InvocationActor } from '../kernel/invocation-actor.js';
import { ActorRetired } from '../kernel/retired.js';
import { attachWaitKey, RecordKind, type AttachWait } from '../../model/persisted.js';
import type { RecordWrite } from '../../store/types.js';
import type { Logger } from '../types.js';
import { recordEnqueue, recordInvocationTask } from '../../telemetry/metrics.js';
import { JournalEvent, startAttemptSpan, type TraceSpan } from '../../telemetry/tracing.js';
import { PROMISE_COMMANDS, type CommandScope, type TargetOutcome } from './commands/index.js';
import { PromiseChanges, type PromiseQueues } from './commands/promise-records.js';
import { readBatch } from './frames.js';
import { sessionFor, type Session } from './session.js';
import { startFrames } from './start.js';
import type { StartGate } from './start-gate.js';

/** What attempts need from the runtime around them. */
export interface InvokerDeps {
  readonly store: Store;
  readonly registry: Registry;
  readonly transport: Transport;
  readonly enableProtocolV7: boolean;
  readonly log: Logger;
  /** Serialises promise changes per workflow id. */
  readonly promises: PromiseQueues;
  /** Where a lingering batch's state writes are announced to readers of the key. */
  readonly held: HeldWrites;
  /** Bounds the attempts starting at once. */
  readonly starts: StartGate;
  now(): number;
  /** Another invocation's committed outcome, for attach and get-output. */
  outcomeOf(id: string): Promise<TargetOutcome>;
  /** A stored Attach command waits for its target: answer it when the target completes. */
  watchAttach(callerId: string, completionId: number, targetId: string): void;
}

/**
 * How long a batch that owes the SDK no answer waits for the frames after it. The SDK writes a
 * handler's last state write and its Output + End in separate writes, usually well under a
 * millisecond apart; on a loaded machine (load average 11 on 2 cores) 2 ms still caught them
 * for 19 of 20 sequential object adds (1 ms: 17 of 20). A handler that then waits for long
 * has its state stored 2 ms later than without lingering.
 */
const LINGER_MS = 2;
/**
 * The longest an attempt holds its starting slot (./start-gate.ts) once Start is on its way: a
 * handler that works long before its first journal entry (an HTTP request outside `ctx.run`)
 * must not hold back the others; with 32 slots, starts still go at 320/s or faster.
 */
const START_SLOT_MS = 100;
/** How often a flush put off by a lapsed lease looks again (the lease is confirmed within 1 s). */
const LEASE_RECHECK_MS = 50;

/** Commands after which the SDK goes on without waiting for the server. */
const QUIET = new Set<number>([
  MessageType.SetStateCommand,
  MessageType.ClearStateCommand,
  MessageType.ClearAllStateCommand,
  MessageType.GetEagerStateCommand,
  MessageType.GetEagerStateKeysCommand,
  MessageType.OutputCommand,
  MessageType.RunCommand,
]);

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Kept until the attach is answered, so the wait is renewed after a restart without reading journals. */
function attachWaitRecord(callerId: string, w: { completionId: number; targetId: string }): RecordWrite {
  const value: AttachWait = { callerId, completionId: w.completionId, targetId: w.targetId };
  return { kind: RecordKind.attachWait, key: attachWaitKey(callerId, w.completionId), value };
}

export class Attempt implements AttemptHandle {
  private machine: SnapshotFrom<typeof attemptMachine>;
  private readonly session: Session | undefined;
  private readonly setupError: string | undefined;
  private stream: InvocationStream | undefined;
  /** Opens the stream: at once when a starting slot is free, else once one is. */
  private open: (() => void) | undefined;
  /** Holds one of the start gate's slots. */
  private startSlot = false;
  private startSlotTimer: NodeJS.Timeout | undefined;
  private readonly decoder = new FrameDecoder();
  /** Frames received and not yet taken by a batch. */
  private received: Frame[] = [];
  /** Batch jobs on the actor's queue, not yet finished. */
  private batchJobs = 0;
  /** The job that will take `received`, once one is queued. */
  private nextBatch: Promise<void> | undefined;
  private lingerTimer: NodeJS.Timeout | undefined;
  private unhold: (() => void) | undefined;
  private sentUpTo = 0;
  /** Journal indices of run completions the SDK asked to be acked instead (v7, §10). */
  private readonly acks = new Set<number>();
  /** The deployment to pin in this attempt's first commit, if none is pinned yet. */
  private pin: string | undefined;
  private inactivityTimer: NodeJS.Timeout | undefined;
  private abortTimer: NodeJS.Timeout | undefined;
  /** A flush put off while the partition's lease is being confirmed (`flush`). */
  private flushTimer: NodeJS.Timeout | undefined;
  /** When tracing is on: this attempt's span, whose context the service gets as `traceparent`. */
  private readonly span: TraceSpan | undefined;

  /**
   * Opens the stream at once, without sending anything on it, so that the connection setup on
   * both sides overlaps the commit that starts this attempt. Nothing of the invocation is sent
   * before `start`, and `start` is only called once that commit is stored. `context` is the
   * one that commit stores.
   */
  constructor(
    private readonly deps: InvokerDeps,
    readonly actor: InvocationActor,
    context: InvocationContext,
  ) {
    let session: Session | undefined;
    let setupError: string | undefined;
    recordEnqueue(actor.partition);
    try {
      session = sessionFor(deps.registry, deps.enableProtocolV7, actor.id, context, actor.handler);
      actor.handler = session.handler;
      this.span = startAttemptSpan({
        invocationId: actor.id,
        target: context.target,
        attempt: context.retryCount + 1,
        deploymentId: session.deployment.id,
        parent: context.traceparent,
      });
      const stream = this.span
        ? { ...session.stream, headers: { ...session.stream.headers, traceparent: this.span.traceparent() } }
        : session.stream;
      const handlers = this.streamHandlers(session);
      this.open = () => (this.stream = deps.transport.open(stream, handlers));
      // A free slot: the stream opens now, so the connection setup overlaps the starting commit.
      this.startSlot = deps.starts.tryTake();
      if (this.startSlot) this.open();
    } catch (err) {
      setupError = message(err);
    }
    this.session = session;
    this.setupError = setupError;
    this.pin = session?.pin;
    const timeouts = session?.handler ?? { inactivityTimeout: 0, abortTimeout: 0 };
    [this.machine] = attemptSteps.initial({
      requestResponse: session?.requestResponse ?? false,
      inactivityTimeout: timeouts.inactivityTimeout,
      abortTimeout: timeouts.abortTimeout,
    });
  }

  start(): void {
    if (this.startSlot || this.setupError !== undefined) return this.begin();
    this.deps.starts.wait(() => {
      if (this.over) return false;
      this.startSlot = true;
      this.open?.();
      this.begin();
      return true;
    });
  }

  private begin(): void {
    if (this.startSlot) this.startSlotTimer = setTimeout(() => this.releaseStartSlot(), START_SLOT_MS).unref();
    this.send(
      this.setupError === undefined ? { type: 'start' } : { type: 'broken', message: this.setupError, code: 500 },
    );
  }

  /** The deployment answered, or the attempt is over: the next attempt may start (./start-gate.ts). */
  private releaseStartSlot(): void {
    if (!this.startSlot) return;
    this.startSlot = false;
    clearTimeout(this.startSlotTimer);
    this.deps.starts.release();
  }

  /** Sends every notification stored since the last flush, in journal order. */
  flush(): void {
    if (!this.stream?.requestOpen || !isStreaming(this.machine.value)) return;
    if (!this.mayRun()) return this.flushOnceHeld();
    const entries = this.actor.journal.entries;
    const frames: Buffer[] = [];
    for (let i = this.sentUpTo; i < entries.length; i++) {
      const e = entries[i]!;
      if (!isNotification(e.type)) continue;
      frames.push(
        this.acks.has(i)
          ? encodeFrame(
              MessageType.ProposeRunCompletionAck,
              encodeProposeRunCompletionAck({ completionId: decodeNotification(e.payload).completionId ?? 0 }),
            )
          : encodeFrame(e.type, e.payload),
      );
    }
    this.sentUpTo = entries.length;
    if (frames.length === 0) return;
    this.stream.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
    this.send({ type: 'answered' });
  }

  /**
   * The lease lapsed after a stall (a store outage) and is being confirmed (cluster-node.ts
   * `confirm`): what was stored meanwhile goes once it is, or never if the partition is lost
   * (its release aborts this attempt). Dropped, it left the SDK waiting for a notification
   * until the inactivity timeout: in the Redis-kill campaign, calls of a key stalled 60 s.
   */
  private flushOnceHeld(): void {
    if (this.flushTimer || !(this.deps.store.coordination?.tenure.has(this.actor.partition) ?? false)) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      if (!this.over) this.flush();
    }, LEASE_RECHECK_MS).unref();
  }

  close(): void {
    this.send({ type: 'close' });
  }

  abort(reason: string): void {
    this.send({ type: 'abort', reason });
  }

  /**
   * A job of this attempt failed. One that reached the actor after it left memory had nothing
   * left to do (the attempt ended with the suspension that retired it).
   */
  private failedJob(err: unknown): void {
    if (!(err instanceof ActorRetired)) this.deps.log.error(`invocation ${this.actor.id}: ${message(err)}`);
  }

  private get over(): boolean {
    return this.machine.status === 'done';
  }

  private send(event: AttemptEvent): void {
    const wasOver = this.over;
    const [next, actions] = attemptSteps.next(this.machine, event);
    this.machine = next;
    for (const effect of attemptEffects(actions)) this.perform(effect);
    if (!wasOver && this.over) {
      this.span?.end();
      this.releaseStartSlot();
    }
  }

  private perform(e: AttemptEffect): void {
    switch (e.type) {
      case 'sendStart':
        void this.sendStart();
        return;
      case 'armInactivity':
        this.armInactivity(e.params.ms);
        return;
      case 'armAbort':
        clearTimeout(this.abortTimer);
        this.abortTimer = setTimeout(() => this.send({ type: 'abortTimeout' }), e.params.ms).unref();
        return;
      case 'clearTimers':
        clearTimeout(this.inactivityTimer);
        clearTimeout(this.abortTimer);
        clearTimeout(this.flushTimer);
        return;
      case 'endRequest':
        this.stream?.endRequest();
        return;
      case 'abortStream':
        this.stream?.abort(e.params.reason);
        return;
      case 'reportFailure':
        recordInvocationTask('failed', this.actor.partition);
        this.span?.fail(e.params.message);
        this.actor.attemptFailed(this, e.params).catch((err: unknown) => this.failedJob(err));
        return;
    }
  }

  /**
   * While what the SDK sent is still being committed, the SDK waits for this server: it is not
   * inactive, and asking it to suspend would only add a suspension and a wake-up (a slow
   * store, a loaded machine). The timeout counts again from then.
   */
  private armInactivity(ms: number): void {
    clearTimeout(this.inactivityTimer);
    this.inactivityTimer = setTimeout(
      () => (this.batchJobs > 0 ? this.armInactivity(ms) : this.send({ type: 'inactive' })),
      ms,
    ).unref();
  }

  /** Whether this node may drive the SDK now: it holds the partition within its lease (store/tenure.ts). */
  private mayRun(): boolean {
    return this.deps.store.coordination?.tenure.holds(this.actor.partition) ?? true;
  }

  private async sendStart(): Promise<void> {
    try {
      const { handler } = this.session!;
      const { target } = this.actor.context;
      const eager = target.key !== undefined && !handler.enableLazyState;
      const state = eager
        ? await this.deps.store.readState(this.actor.partition, storedService(target), target.key!)
        : undefined;
      if (this.over || this.actor.attempt !== this) return;
      // A node that woke up after its partition's lease ran out (paused, stalled) starts nothing:
      // the handler would run steps beside the new owner's attempt.
      if (!this.mayRun()) throw new Error(`partition ${this.actor.partition} is not held by this node now`);
      this.sentUpTo = this.actor.journal.length;
      this.stream!.write(
        startFrames({
          id: this.actor.id,
          key: target.key,
          journal: this.actor.journal.entries,
          state,
          retryCountSinceLastStoredEntry: this.actor.failuresSinceGrowth,
          durationSinceLastStoredEntry: Math.max(0, this.deps.now() - this.actor.lastGrowthAt),
        }),
      );
      recordInvocationTask('started', this.actor.partition);
      this.send({ type: 'replayed' });
    } catch (err) {
      this.send({ type: 'broken', message: message(err), code: 500 });
    }
  }

  private streamHandlers(session: Session): StreamHandlers {
    return {
      onResponse: (status, headers) => {
        if (status !== 200)
          this.send({
            type: 'broken',
            message: `unexpected status ${status} from the deployment`,
            code: status === 415 ? 415 : 500,
          });
        else if (headers['content-type'] !== session.contentType) {
          this.send({
            type: 'broken',
            message: `unexpected content-type '${String(headers['content-type'])}' from the deployment`,
            code: 500,
          });
        }
      },
      onData: (chunk) => this.onData(chunk),
      onEnd: () => this.streamEnded('the deployment ended the stream without End, Suspension or Error'),
      onError: (err) => this.streamEnded(err.message),
    };
  }

  /**
   * The response is over. Frames that arrived before it are still queued on the invocation,
   * so the verdict waits behind them: only a stream that ended without End, Suspension or
   * Error is a failed attempt.
   */
  private streamEnded(reason: string): void {
    if (this.lingerTimer) void this.queueBatch();
    this.actor
      .run(async () => {
        if (!this.over && this.actor.attempt === this) this.send({ type: 'broken', message: reason, code: 500 });
      })
      .catch((err: unknown) => this.failedJob(err));
  }

  private onData(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (err) {
      this.send({
        type: 'broken',
        message: `bad frame from the deployment: ${message(err)}`,
        code: ProtocolCode.protocolViolation,
      });
      return;
    }
    if (frames.length === 0) return;
    this.releaseStartSlot();
    this.send({ type: 'frames' });
    this.received.push(...frames);
    // Frames that arrive before the batch job starts join it: one commit per burst. Behind a
    // running batch job they wait anyway, so only an idle attempt lingers.
    if (this.nextBatch) return;
    if (this.batchJobs === 0 && this.received.every((f) => QUIET.has(f.type))) this.linger();
    else void this.queueBatch();
  }

  private linger(): void {
    if (this.lingerTimer) return;
    this.lingerTimer = setTimeout(() => void this.queueBatch(), LINGER_MS);
    const { target } = this.actor.context;
    if (target.key !== undefined)
      this.unhold = this.deps.held.hold(this.actor.partition, storedService(target), target.key, () =>
        this.queueBatch(),
      );
  }

  /** Puts the received frames on the actor's queue as one batch; resolves once it is committed. */
  private queueBatch(): Promise<void> {
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.unhold?.();
    this.unhold = undefined;
    if (!this.nextBatch) {
      this.batchJobs++;
      this.nextBatch = this.actor
        .run(() => this.processReceived())
        .catch((err: unknown) => this.failedJob(err))
        .finally(() => this.batchJobs--);
    }
    return this.nextBatch;
  }

  /** A batch with promise commands is read and committed under its workflow id's promise queue. */
  private async processReceived(): Promise<void> {
    const frames = this.received;
    this.received = [];
    this.nextBatch = undefined;
    if (this.over || this.actor.attempt !== this) return;
    const { target } = this.actor.context;
    if (
      target.serviceTy !== 'Workflow' ||
      target.key === undefined ||
      !frames.some((f) => PROMISE_COMMANDS.has(f.type))
    )
      return this.commitBatch(frames);
    const { promises, store } = this.deps;
    const owner = storedService(target);
    return promises.run(owner, target.key, () =>
      this.commitBatch(frames, new PromiseChanges(store, this.actor.partition, owner, target.key!)),
    );
  }

  private async commitBatch(frames: Frame[], promises?: PromiseChanges): Promise<void> {
    const now = this.deps.now();
    const journalAt = this.actor.journal.length;
    const batch = await readBatch(frames, {
      scope: this.scope(now, journalAt, promises),
      protocolVersion: this.session!.version,
      now,
      storedOutput: () => this.actor.journal.lastOutput(),
    });
    if (this.span)
      for (const e of batch.entries.filter((x) => isCommand(x.type)))
        this.span.event(JournalEvent.newCommand, { [JournalEvent.commandType]: messageName(e.type) });
    if (batch.ended) {
      recordInvocationTask(
        batch.failed ? 'failed' : batch.events.some((e) => e.type === 'suspend') ? 'suspended' : 'completed',
        this.actor.partition,
      );
      if (batch.failed) this.span?.fail('the attempt failed');
      this.send({ type: 'ended' });
    }
    if (batch.entries.length === 0 && batch.events.length === 0) return;
    for (const offset of batch.acks) this.acks.add(journalAt + offset);
    const events: InvocationEvent[] = this.pin
      ? [{ type: 'pinDeployment', deploymentId: this.pin, now }, ...batch.events]
      : batch.events;
    this.pin = undefined;
    const { target } = this.actor.context;
    const service = storedService(target);
    const key = target.key;
    // Writing a key's state restarts its expiry clock, in the same commit (state_ttl).
    const ttl = this.session!.handler.stateTtl;
    const expiry =
      batch.state.length > 0 && key !== undefined && ttl !== undefined
        ? stateExpiryWrites(target.service, key, target.scope, ttl, now)
        : undefined;
    await this.actor.commit({
      events,
      entries: batch.entries,
      write: {
        timersAdd: expiry ? [...batch.timersAdd, expiry.timer] : batch.timersAdd,
        outboxAdd: batch.outboxAdd,
        ...(batch.state.length > 0 ? { state: [{ service, key: key ?? '', ops: batch.state }] } : {}),
        records: [
          ...(promises ? promises.writes() : []),
          ...batch.attachWaits.map((w) => attachWaitRecord(this.actor.id, w)),
          ...(expiry ? [expiry.record] : []),
        ],
      },
    });
    // Counted after the commit: entries stored with the failure came before it (Start field 7).
    if (batch.failed) this.actor.failuresSinceGrowth++;
    // Only stored attaches wait: a lost commit leaves nothing to answer (§13 rule 5).
    for (const w of batch.attachWaits) this.deps.watchAttach(this.actor.id, w.completionId, w.targetId);
  }

  private scope(now: number, journalAt: number, promises: PromiseChanges | undefined): CommandScope {
    let n = 0;
    const { store, registry } = this.deps;
    return {
      invocationId: this.actor.id,
      partition: this.actor.partition,
      target: this.actor.context.target,
      handlerTy: this.session!.handler.handler.ty,
      store,
      registry,
      now,
      pendingState: [],
      // Unique and stable: each batch that writes messages appends at least their commands.
      nextMessageId: () => `${this.actor.id}:${journalAt}:${n++}`,
      ...(promises ? { promises } : {}),
      outcomeOf: (id) => this.deps.outcomeOf(id),
    };
  }
}
