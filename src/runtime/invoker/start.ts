/**
 * What an attempt writes first (service-protocol.md §7): `Start`, then every stored journal
 * entry, replayed in order.
 */
import { createHash } from 'node:crypto';
import { encodeFrame } from '../../protocol/framing.js';
import { encodeStart, MessageType } from '../../protocol/messages.js';
import { invocationIdToBytes, parseInvocationId } from '../../protocol/ids.js';
import type { JournalEntry } from '../../store/types.js';

export interface StartFacts {
  id: string;
  key: string | undefined;
  journal: readonly JournalEntry[];
  /** The whole state, eagerly; undefined when the handler reads it lazily. */
  state: Map<string, Uint8Array> | undefined;
  retryCountSinceLastStoredEntry: number;
  durationSinceLastStoredEntry: number;
}

export function startFrames(f: StartFacts): Buffer {
  const start = encodeStart({
    id: invocationIdToBytes(parseInvocationId(f.id)),
    debugId: f.id,
    knownEntries: f.journal.length,
    stateMap: [...(f.state ?? [])].map(([key, value]) => ({ key: Buffer.from(key, 'utf8'), value })),
    partialState: f.state === undefined,
    key: f.key ?? '',
    retryCountSinceLastStoredEntry: f.retryCountSinceLastStoredEntry,
    durationSinceLastStoredEntry: f.durationSinceLastStoredEntry,
    randomSeed: randomSeed(f.id),
  });
  return Buffer.concat([
    encodeFrame(MessageType.Start, start),
    ...f.journal.map((e) => encodeFrame(e.type, e.payload)),
  ]);
}

/** Stable per invocation, as every attempt must see the same seed (§7 field 9). */
function randomSeed(invocationId: string): bigint {
  return createHash('sha256').update(invocationId).digest().readBigUInt64BE(0);
}
