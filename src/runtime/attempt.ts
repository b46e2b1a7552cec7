/**
 * One attempt of an invocation: one HTTP stream to the deployment (service-protocol.md §16b).
 *
 * It replays the journal after `Start`, turns every chunk of SDK frames into one job on the
 * invocation's queue (one commit per chunk, not per message), forwards notifications once
 * they are stored, and provokes suspension by half-closing the request after the inactivity
 * timeout (§11). It never decides the invocation's fate itself: it reports End, Suspension,
 * Error or a broken stream to the machine.
 */
import { createHash } from 'node:crypto';
import { encodeFrame, FrameDecoder, REQUESTED_ACK, type Frame } from '../protocol/framing.js';
import {
  decodeError,
  decodeNotification,
  decodeOutputCommand,
  decodeProposeRunCompletion,
  decodeSuspension,
  encodeNotification,
  encodeProposeRunCompletionAck,
  encodeStart,
  isCommand,
  isCustomEntry,
  isNotification,
  MessageType,
} from '../protocol/messages.js';
import { invocationIdToBytes, parseInvocationId } from '../protocol/ids.js';
import type { InvocationStream } from '../protocol/transport.js';
import type { Deployment, EffectiveHandler } from '../registry/types.js';
import type { Completion, InvocationContext, InvocationEvent } from '../../machines/invocation.js';
import type { JournalEntry, OutboxMessage, StateOp, Timer } from '../store/types.js';
import { CommandRejected, commandOutcome, type CommandScope } from './commands.js';
import { PROMISE_COMMANDS, PromiseChanges } from './promises.js';
import type { InvocationHost } from './invocation-host.js';

export class Attempt {
  private stream: InvocationStream | undefined;
  private readonly decoder = new FrameDecoder();
  private sentUpTo = 0;
  /** Journal indices of run completions the SDK asked to be acked instead (v7, §10). */
  private readonly acks = new Set<number>();
  private finished = false;
  private version = 6;
  private requestResponse = false;
  /** Start and the journal were written: notifications may follow. */
  private started = false;
  private handler: EffectiveHandler | undefined;
  private pinPending: string | undefined;
  private inactivityTimer: NodeJS.Timeout | undefined;
  private abortTimer: NodeJS.Timeout | undefined;
  private outboxSeq = 0;
  /** Inert frames not committed yet (see `process`). */
  private held: Frame[] = [];

  constructor(
    readonly host: InvocationHost,
    readonly seq: number,
  ) {}

  /**
   * Opens the stream to the deployment without sending anything on it, so that the connection
   * setup on both sides overlaps the commit that starts this attempt. Nothing of the
   * invocation is sent before `start`, and `start` is only called once that commit is stored.
   * `context` is the one that commit stores.
   */
  connect(context: InvocationContext): void {
    try {
      this.openStream(context);
    } catch {
      // `start` tries again and reports the failure as the attempt's.
    }
  }

  start(): void {
    this.begin().catch((err: unknown) => {
      this.finished = true;
      this.host.attemptBroken(this, err instanceof Error ? err.message : String(err));
    });
  }

  /** Sends every notification stored since the last flush, in journal order. */
  flush(): void {
    // Before Start the stream may already be open (`connect`), but nothing may precede Start.
    if (!this.stream || !this.started || this.finished || !this.stream.requestOpen) return;
    const entries = this.host.journal.entries;
    const frames: Buffer[] = [];
    for (let i = this.sentUpTo; i < entries.length; i++) {
      const e = entries[i]!;
      if (!isNotification(e.type)) continue;
      frames.push(
        this.acks.has(i)
          ? encodeFrame(MessageType.ProposeRunCompletionAck, encodeProposeRunCompletionAck({ completionId: decodeNotification(e.payload).completionId ?? 0 }))
          : encodeFrame(e.type, e.payload),
      );
    }
    this.sentUpTo = entries.length;
    if (frames.length > 0) {
      this.stream.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
      this.touch();
    }
  }

  /** The attempt ended normally: release the stream. */
  close(): void {
    this.finished = true;
    this.clearTimers();
    this.stream?.endRequest();
  }

  abort(reason: string): void {
    this.finished = true;
    this.clearTimers();
    this.stream?.abort(reason);
  }

  private openStream(context: InvocationContext): void {
    if (this.stream) return;
    const { services } = this.host;
    const { target } = context;
    const handler = services.registry.resolveHandler(target.service, target.handler);
    if (!handler) throw new Error(`service '${target.service}' handler '${target.handler}' is not registered`);
    let deployment: Deployment = handler.deployment;
    if (context.deploymentId && context.deploymentId !== deployment.id) {
      deployment = services.registry.getDeployment(context.deploymentId) ?? deployment;
    }
    const version = Math.min(deployment.maxProtocolVersion, services.config.enableProtocolV7 ? 7 : 6);
    if (version < deployment.minProtocolVersion) {
      throw new Error(`deployment ${deployment.id} supports protocol v${deployment.minProtocolVersion}..v${deployment.maxProtocolVersion}, not v5..v7`);
    }
    this.pinPending = context.deploymentId ? undefined : deployment.id;
    this.handler = handler;
    this.version = version;
    this.requestResponse = deployment.protocolType === 'RequestResponse' || handler.inactivityTimeout === 0;
    const contentType = `application/vnd.restate.invocation.v${version}`;
    this.stream = services.transport.open(
      {
        uri: deployment.uri,
        path: `invoke/${encodeURIComponent(target.service)}/${encodeURIComponent(target.handler)}`,
        http11: deployment.httpVersion === 'HTTP/1.1',
        headers: {
          'content-type': contentType,
          accept: contentType,
          'x-restate-invocation-id': this.host.id,
          ...(target.key !== undefined ? { 'x-restate-service-key': encodeURIComponent(target.key) } : {}),
          ...deployment.additionalHeaders,
        },
      },
      {
        onResponse: (status, headers) => {
          if (status !== 200) this.broken(`unexpected status ${status} from the deployment`, status === 415 ? 415 : 500);
          else if (headers['content-type'] !== contentType) this.broken(`unexpected content-type '${String(headers['content-type'])}' from the deployment`);
        },
        onData: (chunk) => this.onData(chunk),
        onEnd: () => this.streamEnded('the deployment ended the stream without End, Suspension or Error'),
        onError: (err) => this.streamEnded(err.message),
      },
    );
  }

  private async begin(): Promise<void> {
    this.openStream(this.host.context);
    const { services } = this.host;
    const { target } = this.host.context;
    const eager = target.key !== undefined && !this.handler!.enableLazyState;
    const state = eager ? await services.store.readState(this.host.partition, target.service, target.key!) : new Map<string, Uint8Array>();
    if (this.finished || this.host.attempt !== this) return;

    const entries = this.host.journal.entries;
    const start = encodeStart({
      id: invocationIdToBytes(parseInvocationId(this.host.id)),
      debugId: this.host.id,
      knownEntries: entries.length,
      stateMap: [...state].map(([key, value]) => ({ key: Buffer.from(key, 'utf8'), value })),
      partialState: !eager,
      key: target.key ?? '',
      retryCountSinceLastStoredEntry: this.host.failuresSinceGrowth,
      durationSinceLastStoredEntry: Math.max(0, services.now() - this.host.lastGrowthAt),
      randomSeed: randomSeed(this.host.id),
    });
    const replay = [encodeFrame(MessageType.Start, start), ...entries.map((e) => encodeFrame(e.type, e.payload))];
    this.sentUpTo = entries.length;
    this.stream!.write(Buffer.concat(replay));
    this.started = true;
    // Request/response endpoints only answer once the request body is complete (§15).
    if (this.requestResponse) this.stream!.endRequest();
    else this.touch();
  }

  private broken(message: string, code = 500): void {
    if (this.finished) return;
    this.abort(message);
    this.host.attemptBroken(this, message, code);
  }

  /**
   * The response is over. Frames that arrived before it are still queued on the invocation,
   * so the verdict waits behind them: only a stream that ended without End, Suspension or
   * Error is a failed attempt.
   */
  private streamEnded(message: string): void {
    this.host
      .run(async () => {
        if (this.finished || this.host.attempt !== this) return;
        this.broken(message);
      })
      .catch((err: unknown) => this.host.services.log.error(`invocation ${this.host.id}: ${String(err)}`));
  }

  private onData(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (err) {
      this.broken(`bad frame from the deployment: ${(err as Error).message}`, 571);
      return;
    }
    if (frames.length === 0) return;
    this.touch();
    this.host.run(() => this.process(frames)).catch((err: unknown) => {
      this.host.services.log.error(`invocation ${this.host.id}: ${String(err)}`);
    });
  }

  /** One chunk of SDK frames → one commit (design.md data flow, step 4). */
  /**
   * A chunk with promise commands is processed and committed under its workflow id's promise
   * queue, so concurrent handlers of one workflow see each other's promise changes.
   */
  private async process(arrived: Frame[]): Promise<void> {
    // Commands that ask nothing of the server wait for the next frame that does (or for the
    // attempt's end): one commit instead of two. Nothing was acknowledged for them, so if the
    // attempt breaks first the SDK sends them again on the next attempt (§13).
    const frames = this.held.length > 0 ? [...this.held, ...arrived] : arrived;
    this.held = [];
    if (frames.every((f) => INERT.has(f.type))) {
      this.held = frames;
      return;
    }
    const { target } = this.host.context;
    if (target.serviceTy !== 'Workflow' || target.key === undefined || !frames.some((f) => PROMISE_COMMANDS.has(f.type))) {
      return this.processFrames(frames);
    }
    const { services } = this.host;
    return services.promises.run(target.service, target.key, () =>
      this.processFrames(frames, new PromiseChanges(services.store, this.host.partition, target.service, target.key!)),
    );
  }

  private async processFrames(frames: Frame[], promises?: PromiseChanges): Promise<void> {
    if (this.host.attempt !== this || this.finished) return;
    const { services } = this.host;
    const now = services.now();
    const entries: JournalEntry[] = [];
    const events: InvocationEvent[] = [];
    const timersAdd: Timer[] = [];
    const outboxAdd: OutboxMessage[] = [];
    const stateOps: StateOp[] = [];
    const attachWaits: Array<{ completionId: number; targetId: string }> = [];
    const scope: CommandScope = {
      invocationId: this.host.id,
      partition: this.host.partition,
      target: this.host.context.target,
      handlerTy: this.handler?.handler.ty,
      store: services.store,
      registry: services.registry,
      now,
      partitions: services.config.partitions,
      pendingState: stateOps,
      ...(promises ? { promises } : {}),
      nextMessageId: () => `${this.host.id}:${this.seq}:${this.host.journal.length + entries.length}:${this.outboxSeq++}`,
    };
    let failed = false;
    const fail = (code: number, message: string, extra: Record<string, unknown> = {}) => {
      events.push({ type: 'attemptFailed', failure: { code, message, errorCode: 'RT0007', ...extra }, now });
      this.finished = true;
      failed = true;
    };

    for (const frame of frames) {
      if (this.finished) break;
      const { type, payload } = frame;
      if (isCommand(type) || isCustomEntry(type)) {
        const entry = { type, payload };
        entries.push(entry);
        if (!isCommand(type)) continue;
        try {
          const outcome = await commandOutcome(scope, entry);
          entries.push(...outcome.notifications);
          timersAdd.push(...outcome.timersAdd);
          outboxAdd.push(...outcome.outbox);
          stateOps.push(...outcome.state);
          attachWaits.push(...outcome.attachWaits);
        } catch (err) {
          if (!(err instanceof CommandRejected)) throw err;
          entries.pop();
          fail(err.code, err.message);
        }
        continue;
      }
      switch (type) {
        case MessageType.ProposeRunCompletion: {
          const p = decodeProposeRunCompletion(payload);
          const n = p.failure ? { completionId: p.resultCompletionId, failure: p.failure } : { completionId: p.resultCompletionId, value: p.value ?? new Uint8Array() };
          entries.push({ type: MessageType.RunCompletionNotification, payload: encodeNotification(n) });
          if (this.version >= 7 && (frame.flags & REQUESTED_ACK) !== 0) this.acks.add(this.host.journal.length + entries.length - 1);
          break;
        }
        case MessageType.AwaitingOn:
          break;
        case MessageType.End: {
          const completion = this.completionOf(entries);
          if (!completion) fail(571, 'the SDK sent End without an Output command');
          else events.push({ type: 'complete', completion, now });
          this.finished = true;
          break;
        }
        case MessageType.Suspension: {
          const s = decodeSuspension(payload);
          events.push({
            type: 'suspend',
            awaiting: { completions: s.waitingCompletions, signals: s.waitingSignals, namedSignals: s.waitingNamedSignals, ...(s.awaitingOn ? { future: s.awaitingOn } : {}) },
            now,
          });
          this.finished = true;
          break;
        }
        case MessageType.Error: {
          const e = decodeError(payload);
          const behavior = e.behavior === 1 ? 'pause' : e.behavior === 2 ? 'fail' : 'retry';
          fail(e.code, e.message, {
            ...(e.stacktrace ? { stacktrace: e.stacktrace } : {}),
            ...(e.relatedCommandIndex !== undefined ? { relatedCommandIndex: e.relatedCommandIndex } : {}),
            ...(e.relatedCommandName !== undefined ? { relatedCommandName: e.relatedCommandName } : {}),
            ...(e.relatedCommandType !== undefined ? { relatedCommandType: e.relatedCommandType } : {}),
            ...(e.nextRetryDelay !== undefined ? { nextRetryDelay: e.nextRetryDelay } : {}),
            behavior,
          });
          break;
        }
        default:
          fail(571, `unexpected message 0x${type.toString(16)} from the SDK`);
      }
    }
    if (entries.length === 0 && events.length === 0) return;
    if (this.pinPending) {
      events.unshift({ type: 'pinDeployment', deploymentId: this.pinPending, now });
      this.pinPending = undefined;
    }
    const target = this.host.context.target;
    await this.host.commit({
      events,
      entries,
      write: {
        timersAdd,
        outboxAdd,
        ...(stateOps.length > 0 ? { state: [{ service: target.service, key: target.key ?? '', ops: stateOps }] } : {}),
        ...(promises ? { records: promises.writes() } : {}),
      },
    });
    // Counted after the commit: entries stored with the failure came before it (Start field 7).
    if (failed) this.host.failuresSinceGrowth++;
    // Only stored attaches wait: a lost commit leaves nothing to answer (§13 rule 5).
    for (const w of attachWaits) services.watchAttach(this.host.id, w.completionId, w.targetId);
  }

  private completionOf(pending: JournalEntry[]): Completion | undefined {
    let output: JournalEntry | undefined;
    for (let i = pending.length - 1; i >= 0 && !output; i--) if (pending[i]!.type === MessageType.OutputCommand) output = pending[i];
    output ??= this.host.journal.lastOutput();
    if (!output) return undefined;
    const o = decodeOutputCommand(output.payload);
    if (o.failure) return { failure: o.failure };
    return { ok: Buffer.from(o.value ?? new Uint8Array()).toString('base64') };
  }

  private touch(): void {
    if (this.finished || !this.handler || !this.stream?.requestOpen) return;
    clearTimeout(this.inactivityTimer);
    const { inactivityTimeout, abortTimeout } = this.handler;
    this.inactivityTimer = setTimeout(() => {
      // Closing the request makes the SDK suspend (§11); if it does not end within the
      // abort timeout, the attempt is given up and retried.
      this.stream?.endRequest();
      this.abortTimer = setTimeout(() => this.broken('the deployment did not end the attempt within the abort timeout'), abortTimeout);
      this.abortTimer.unref?.();
    }, inactivityTimeout);
    this.inactivityTimer.unref?.();
  }

  private clearTimers(): void {
    clearTimeout(this.inactivityTimer);
    clearTimeout(this.abortTimer);
  }
}

/** Commands whose storing has no effect beyond the journal, and hints. */
const INERT: ReadonlySet<number> = new Set([
  MessageType.OutputCommand,
  MessageType.RunCommand,
  MessageType.GetEagerStateCommand,
  MessageType.GetEagerStateKeysCommand,
  MessageType.SetStateCommand,
  MessageType.ClearStateCommand,
  MessageType.ClearAllStateCommand,
  MessageType.AwaitingOn,
]);

/** Stable per invocation, as every attempt must see the same seed (§7 field 9). */
function randomSeed(invocationId: string): bigint {
  return createHash('sha256').update(invocationId).digest().readBigUInt64BE(0);
}
