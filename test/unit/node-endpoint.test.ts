/**
 * The node port's protocol sniffing (src/telemetry/node-endpoint.ts): a connection whose first
 * bytes have not named HTTP/1.1 or h2c yet belongs to neither server, so the endpoint itself
 * must close it. Left open, `close()` never completed, and a worker stopping while a peer had
 * connected and gone (its FIN half-closed the socket) waited for it for ever.
 */
import test from 'ava';
import type http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { createNodeEndpoint } from '../../src/telemetry/node-endpoint.js';

async function listening(): Promise<{ server: http.Server; port: number }> {
  const server = createNodeEndpoint({});
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port };
}

/** Connects and sends `bytes` (then, with `end`, a FIN); resolves once the server has the socket. */
async function connect(server: http.Server, port: number, bytes: string, end: boolean): Promise<net.Socket> {
  const accepted = once(server, 'connection');
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  if (bytes) socket.write(bytes);
  if (end) socket.end();
  await accepted;
  await new Promise((r) => setTimeout(r, 50));
  return socket;
}

function closes(server: http.Server): Promise<'closed' | 'still open'> {
  const closed = new Promise<'closed'>((r) => server.close(() => r('closed')));
  server.closeAllConnections();
  return Promise.race([closed, new Promise<'still open'>((r) => setTimeout(() => r('still open'), 2000))]);
}

for (const [name, bytes, end] of [
  ['nothing sent yet', '', false],
  ['a part of the h2c preface', 'PRI * HTTP', false],
  ['nothing sent, then a FIN', '', true],
  ['a part of the preface, then a FIN', 'PRI *', true],
] as const)
  test(`a connection that has not named its protocol (${name}) does not keep the endpoint open`, async (t) => {
    const { server, port } = await listening();
    const socket = await connect(server, port, bytes, end);
    t.is(await closes(server), 'closed');
    socket.destroy();
  });

test('a peer that connects and leaves before naming its protocol leaves no socket behind', async (t) => {
  const { server, port } = await listening();
  const socket = await connect(server, port, 'PRI', true);
  if (!socket.closed) await once(socket, 'close');
  const count = await new Promise<number>((r, j) => server.getConnections((e, n) => (e ? j(e) : r(n))));
  t.is(count, 0);
  server.close();
});

test('HTTP/1.1 on the node port still answers (a scrape of an unknown path)', async (t) => {
  const { server, port } = await listening();
  const res = await fetch(`http://127.0.0.1:${port}/nothing`);
  t.is(res.status, 404);
  t.is(await closes(server), 'closed');
});
