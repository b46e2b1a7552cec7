/**
 * Back-pressure: at most `limit` invocations of one subscription created and not yet
 * completed. A message waits for a free slot before its invocation is created, so a slow
 * handler holds the source back instead of letting invocations pile up in the store.
 * Slots are handed out in the order they were asked for.
 */
export class InFlight {
  private used = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  get count(): number {
    return this.used;
  }

  acquire(signal: AbortSignal): Promise<void> {
    if (this.used < this.limit && this.waiting.length === 0) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const take = () => {
        signal.removeEventListener('abort', abort);
        this.used++;
        resolve();
      };
      const abort = () => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', abort, { once: true });
      this.waiting.push(take);
    });
  }

  release(): void {
    this.used--;
    if (this.used < this.limit) this.waiting.shift()?.();
  }
}
