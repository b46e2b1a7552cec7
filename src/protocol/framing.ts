/**
 * Message framing of the service protocol (service-protocol.md §5): every message is an 8-byte
 * big-endian header (u16 type, u16 flags, u32 payload length) followed by the protobuf payload.
 */

export interface Frame {
  type: number;
  flags: number;
  payload: Uint8Array;
}

export const HEADER_LENGTH = 8;

/** Flag bit: the sender asks for an ack (ProposeRunCompletion in v7, or any command) (§5). */
export const REQUESTED_ACK = 0x8000;

/** restate-server rejects messages of 32 MiB by default (§5). */
export const DEFAULT_MAX_PAYLOAD_LENGTH = 32 * 1024 * 1024;

export class FrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FrameError';
  }
}

export function encodeFrame(type: number, payload: Uint8Array, flags = 0): Buffer {
  const out = Buffer.allocUnsafe(HEADER_LENGTH + payload.length);
  out.writeUInt16BE(type, 0);
  out.writeUInt16BE(flags, 2);
  out.writeUInt32BE(payload.length, 4);
  out.set(payload, HEADER_LENGTH);
  return out;
}

/**
 * Incremental frame parser. Frames do not line up with HTTP chunks (§5), so partial frames are
 * buffered across `push` calls. Chunks are kept as a list and only joined once a whole frame
 * is available, so a large frame arriving in many small chunks costs one copy, not one per chunk.
 *
 * A frame that lies inside a single chunk gets a zero-copy payload view of that chunk.
 * After `push` throws, the stream is unusable: abort the attempt.
 */
export class FrameDecoder {
  private chunks: Uint8Array[] = [];
  /** Read offset into chunks[0]. */
  private offset = 0;
  private buffered = 0;
  private header: { type: number; flags: number; length: number } | undefined;

  constructor(readonly maxPayloadLength = DEFAULT_MAX_PAYLOAD_LENGTH) {}

  /** Bytes received that do not yet form a complete frame; non-zero at end of stream = truncated. */
  get pendingBytes(): number {
    return this.buffered;
  }

  push(chunk: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    for (;;) {
      if (this.header === undefined) {
        if (this.buffered < HEADER_LENGTH) break;
        const h = this.take(HEADER_LENGTH);
        const length = ((h[4]! << 24) | (h[5]! << 16) | (h[6]! << 8) | h[7]!) >>> 0;
        if (length > this.maxPayloadLength) {
          throw new FrameError(`message of ${length} bytes exceeds the limit of ${this.maxPayloadLength}`);
        }
        this.header = { type: (h[0]! << 8) | h[1]!, flags: (h[2]! << 8) | h[3]!, length };
      }
      if (this.buffered < this.header.length) break;
      const { type, flags, length } = this.header;
      frames.push({ type, flags, payload: this.take(length) });
      this.header = undefined;
    }
    return frames;
  }

  /** Removes n buffered bytes (n <= buffered): a view when they sit in one chunk, else a copy. */
  private take(n: number): Uint8Array {
    this.buffered -= n;
    const first = this.chunks[0];
    if (n === 0 || first === undefined) return new Uint8Array(0);
    if (first.length - this.offset >= n) {
      const view = first.subarray(this.offset, this.offset + n);
      this.consumed(first, n);
      return view;
    }
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0]!;
      const count = Math.min(n - filled, c.length - this.offset);
      out.set(c.subarray(this.offset, this.offset + count), filled);
      filled += count;
      this.consumed(c, count);
    }
    return out;
  }

  private consumed(chunk: Uint8Array, count: number): void {
    this.offset += count;
    if (this.offset === chunk.length) {
      this.chunks.shift();
      this.offset = 0;
    }
  }
}
