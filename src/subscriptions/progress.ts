/**
 * What `/query` shows of one subscription (`sys_subscription_progress`): how many messages
 * were handed to invocations, at which position, how fast lately, and the last failure.
 */
import type { SourceMessage } from './source.js';

/** The rate is the messages acknowledged over this many trailing seconds, divided by it. */
const RATE_WINDOW_S = 10;

export class Progress {
  delivered = 0;
  lastPosition: string | undefined;
  lastStream: string | undefined;
  /** When the broker took the last delivered message (epoch ms). */
  lastMessageAt: number | undefined;
  lastError: string | undefined;
  /** Messages acknowledged per second, the last RATE_WINDOW_S seconds (index: second % window). */
  private readonly perSecond = new Array<number>(RATE_WINDOW_S).fill(0);
  private readonly secondOf = new Array<number>(RATE_WINDOW_S).fill(0);

  acknowledged(messages: SourceMessage[], now: number): void {
    const last = messages[messages.length - 1];
    if (!last) return;
    this.delivered += messages.length;
    this.lastPosition = last.position;
    this.lastStream = last.stream;
    this.lastMessageAt = last.timestamp;
    this.lastError = undefined;
    const second = Math.floor(now / 1000);
    const slot = second % RATE_WINDOW_S;
    if (this.secondOf[slot] !== second) {
      this.secondOf[slot] = second;
      this.perSecond[slot] = 0;
    }
    this.perSecond[slot]! += messages.length;
  }

  failed(err: unknown): void {
    this.lastError = err instanceof Error ? err.message : String(err);
  }

  rate(now: number): number {
    const second = Math.floor(now / 1000);
    let sum = 0;
    for (let i = 0; i < RATE_WINDOW_S; i++) if (second - this.secondOf[i]! < RATE_WINDOW_S) sum += this.perSecond[i]!;
    return sum / RATE_WINDOW_S;
  }
}
