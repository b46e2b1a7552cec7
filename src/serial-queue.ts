/**
 * Jobs that must not interleave run one after another: the jobs of one invocation actor, of
 * one object key, of one workflow id's promises, the creations of one invocation id. A job
 * that fails does not stop the ones queued after it.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const next = this.tail.then(job);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/**
 * A serial queue whose job may let the next one start before it ends, by calling the `handOff`
 * it is given (a key's lock once its change is on its way to the store: kernel/object-keys.ts).
 * A job that ends, or fails, without handing off hands off then.
 */
export class HandOffQueue {
  private tail: Promise<void> = Promise.resolve();

  run<T>(job: (handOff: () => void) => Promise<T>): Promise<T> {
    let handOff!: () => void;
    const slot = new Promise<void>((resolve) => (handOff = resolve));
    const next = this.tail.then(() => job(handOff)).finally(handOff);
    this.tail = slot;
    return next;
  }
}

/** One serial queue per key, kept only while it has jobs. */
export class KeyedSerialQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, job: () => Promise<T>): Promise<T> {
    const next = (this.tails.get(key) ?? Promise.resolve()).then(job);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}

/**
 * A serial queue whose urgent jobs go before the ordinary ones still waiting (never before the
 * one running). A scope's limiter uses it so that giving a slot back, which lets a waiter run,
 * does not wait behind a flood of new invocations asking for one.
 */
export class PriorityQueue {
  private readonly urgent: Array<() => Promise<void>> = [];
  private readonly ordinary: Array<() => Promise<void>> = [];
  private running = false;

  run<T>(job: () => Promise<T>, urgent = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // Through a promise, so a job that throws at once fails alone and the queue goes on.
      (urgent ? this.urgent : this.ordinary).push(() => Promise.resolve().then(job).then(resolve, reject));
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    for (
      let next = this.urgent.shift() ?? this.ordinary.shift();
      next;
      next = this.urgent.shift() ?? this.ordinary.shift()
    )
      await next();
    this.running = false;
  }
}
