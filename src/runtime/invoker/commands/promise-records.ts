/**
 * Durable promises of workflows (service-protocol.md §9.7): one record per (workflow, id,
 * name) in the workflow id's partition, holding the result once completed, or the
 * `GetPromise` commands still waiting for it.
 *
 * Reading and writing a promise happens while the invoking command's batch of frames is
 * processed, and is committed with that batch. Batches of different invocations of one
 * workflow id that touch promises are serialised per workflow id (`PromiseQueues`), so a
 * waiter is never lost between a `GetPromise` and a concurrent `CompletePromise`.
 */
import {
  decodeCompletePromiseCommand,
  decodeGetPromiseCommand,
  encodeNotification,
  MessageType,
  type Notification,
} from '../../../protocol/messages.js';
import type { JournalEntry, OutboxMessage, RecordWrite, Store } from '../../../store/types.js';
import { RecordKind, type PromiseRecord } from '../../../model/persisted.js';
import { messageResult } from '../../kernel/results.js';
import { KeyedSerialQueue } from '../../../serial-queue.js';
import type { OutboxBody } from '../../../model/outbox.js';

export const PROMISE_COMMANDS: ReadonlySet<number> = new Set([
  MessageType.GetPromiseCommand,
  MessageType.PeekPromiseCommand,
  MessageType.CompletePromiseCommand,
]);

/** Serial queues per workflow id, for batches that read and write its promises. */
export class PromiseQueues {
  private readonly queues = new KeyedSerialQueue();

  run<T>(service: string, key: string, job: () => Promise<T>): Promise<T> {
    return this.queues.run(JSON.stringify([service, key]), job);
  }
}

/** The promises one batch touches, read once and written back with the batch's commit. */
export class PromiseChanges {
  private readonly records = new Map<string, PromiseRecord>();
  private readonly dirty = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly partition: number,
    private readonly service: string,
    private readonly workflowKey: string,
  ) {}

  writes(): RecordWrite[] {
    return [...this.dirty].map((key) => ({ kind: RecordKind.promise, key, value: this.records.get(key)! }));
  }

  private async load(name: string): Promise<[string, PromiseRecord]> {
    const key = JSON.stringify([this.service, this.workflowKey, name]);
    let rec = this.records.get(key);
    if (!rec) {
      rec = ((await this.store.getRecord(this.partition, RecordKind.promise, key)) as PromiseRecord | undefined) ?? {
        waiters: [],
      };
      this.records.set(key, rec);
    }
    return [key, rec];
  }

  /** Applies one promise command: the notifications to append now and the messages to waiters. */
  async apply(
    invocationId: string,
    entry: JournalEntry,
    nextMessageId: () => string,
  ): Promise<{ notifications: JournalEntry[]; outbox: OutboxMessage[] }> {
    const notifications: JournalEntry[] = [];
    const outbox: OutboxMessage[] = [];
    const note = (type: number, n: Notification) => notifications.push({ type, payload: encodeNotification(n) });
    if (entry.type === MessageType.CompletePromiseCommand) {
      const c = decodeCompletePromiseCommand(entry.payload);
      const [key, rec] = await this.load(c.key);
      if (rec.result) {
        note(MessageType.CompletePromiseCompletionNotification, {
          completionId: c.resultCompletionId,
          failure: { code: 409, message: 'promise was already completed' },
        });
        return { notifications, outbox };
      }
      rec.result = c.completionFailure
        ? { failure: c.completionFailure }
        : { value: Buffer.from(c.completionValue ?? new Uint8Array()).toString('base64') };
      for (const w of rec.waiters) {
        const body: OutboxBody = {
          kind: 'complete',
          notificationType: MessageType.GetPromiseCompletionNotification,
          invocationId: w.invocationId,
          completionId: w.completionId,
          ...rec.result,
        };
        outbox.push({ id: nextMessageId(), body });
      }
      rec.waiters = [];
      this.dirty.add(key);
      note(MessageType.CompletePromiseCompletionNotification, { completionId: c.resultCompletionId, void: true });
      return { notifications, outbox };
    }
    const peek = entry.type === MessageType.PeekPromiseCommand;
    const c = decodeGetPromiseCommand(entry.payload);
    const [key, rec] = await this.load(c.key);
    const type = peek ? MessageType.PeekPromiseCompletionNotification : MessageType.GetPromiseCompletionNotification;
    if (rec.result) {
      note(type, { completionId: c.resultCompletionId, ...messageResult(rec.result) });
    } else if (peek) {
      note(type, { completionId: c.resultCompletionId, void: true });
    } else {
      rec.waiters.push({ invocationId, completionId: c.resultCompletionId });
      this.dirty.add(key);
    }
    return { notifications, outbox };
  }
}
