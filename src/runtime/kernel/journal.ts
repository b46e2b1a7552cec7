/**
 * The in-memory view of one invocation's journal: the stored entries in order, plus an index
 * of which completion ids and signals already have a notification (to answer "is what the
 * SDK awaits already here?" without decoding the journal again).
 */
import type { JournalEntry } from '../../store/types.js';
import { decodeNotification, isCommand, isNotification, MessageType } from '../../protocol/messages.js';

/** How a stored notification ended: needed to evaluate v7 all/any combinators. */
export type Resolution = 'success' | 'failure';

export class JournalView {
  readonly entries: JournalEntry[] = [];
  commandCount = 0;
  readonly completions = new Map<number, Resolution>();
  readonly signals = new Map<number, Resolution>();
  readonly namedSignals = new Map<string, Resolution>();

  constructor(entries: JournalEntry[] = []) {
    for (const e of entries) this.push(e);
  }

  get length(): number {
    return this.entries.length;
  }

  push(entry: JournalEntry): void {
    this.entries.push(entry);
    if (isCommand(entry.type)) {
      this.commandCount++;
    } else if (isNotification(entry.type)) {
      const n = decodeNotification(entry.payload);
      const resolution: Resolution = n.failure ? 'failure' : 'success';
      if (n.completionId !== undefined) this.completions.set(n.completionId, resolution);
      else if (n.signalId !== undefined) this.signals.set(n.signalId, resolution);
      else if (n.signalName !== undefined) this.namedSignals.set(n.signalName, resolution);
    }
  }

  /** The last Output command, which holds the invocation's result once the SDK sent End. */
  lastOutput(): JournalEntry | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (this.entries[i]!.type === MessageType.OutputCommand) return this.entries[i];
    }
    return undefined;
  }
}
