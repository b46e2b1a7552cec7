/**
 * Free loopback ports for the processes a test starts, below 32768. A process that is killed
 * and started again binds its port a second time, and in between the port must not be taken:
 * the kernel hands out 32768-60999 as the source ports of outgoing connections (and as the
 * ports of `listen(0)`), so with many stacks at once a restart there failed with EADDRINUSE.
 */
import { createServer } from 'node:net';

const LOWEST = 20_000;
const ABOVE_HIGHEST = 32_768;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port nobody listens on right now, chosen at random in 20000-32767 (clear of 6379 and the other services' ports). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = LOWEST + Math.floor(Math.random() * (ABOVE_HIGHEST - LOWEST));
    if (await bindable(port)) return port;
  }
}

/**
 * Runs `start`, which binds ports it chooses with `freePort`, again when another test process
 * bound one of them first (EADDRINUSE), up to 5 times.
 */
export async function retryIfPortTaken<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 5 || !/EADDRINUSE/.test(String(err))) throw err;
    }
  }
}
