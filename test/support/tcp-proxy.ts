/**
 * A TCP relay in front of a real server, to lose a reply on purpose: while replies are held,
 * what the server sends is dropped, and `cut()` then breaks every connection, as a server that
 * ran a command and went away before its answer left would. While requests are held, nothing
 * reaches the server either: a command lost on its way, whose client cannot tell the two apart.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops what the server sends on the open connections from now on. */
  holdReplies(): void;
  /** Drops what the clients send on the open connections from now on (and the replies): nothing reaches the server. */
  holdRequests(): void;
  /** Breaks every open connection; new ones are relayed as normal again. */
  cut(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; server: Socket; held: boolean; swallowed: boolean }>();
  const proxy = createServer((client) => {
    const pair = { client, server: connect(targetPort, '127.0.0.1'), held: false, swallowed: false };
    pairs.add(pair);
    client.on('data', (d) => {
      if (!pair.swallowed) pair.server.write(d);
    });
    pair.server.on('data', (d) => {
      if (!pair.held) client.write(d);
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      pair.server.destroy();
    };
    for (const s of [client, pair.server]) {
      s.on('close', end);
      s.on('error', end);
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  if (typeof address !== 'object' || !address) throw new Error('the proxy has no port');
  return {
    port: address.port,
    holdReplies() {
      for (const pair of pairs) pair.held = true;
    },
    holdRequests() {
      for (const pair of pairs) pair.held = pair.swallowed = true;
    },
    cut() {
      for (const pair of pairs) pair.client.destroy();
    },
    close() {
      for (const pair of pairs) pair.client.destroy();
      return new Promise((resolve) => proxy.close(() => resolve()));
    },
  };
}
