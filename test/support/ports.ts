/** Free loopback ports for the processes a test starts. */
import { createServer } from 'node:net';

/** A port nobody listens on right now (never 6379, where a machine's own Redis may run). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.unref();
      server.on('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() =>
          typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
        );
      });
    });
    if (port !== 6379) return port;
  }
}
