/**
 * Concurrent loads of one key share one promise, so an actor is rebuilt from the store once
 * and never exists twice in memory.
 */
export class SingleFlight<T> {
  private readonly inflight = new Map<string, Promise<T>>();

  async run(key: string, load: () => Promise<T>): Promise<T> {
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const started = load();
    this.inflight.set(key, started);
    try {
      return await started;
    } finally {
      this.inflight.delete(key);
    }
  }
}
