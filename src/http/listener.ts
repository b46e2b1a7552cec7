/**
 * The HTTP/1.1 servers of both ports, with the reference's limits on request heads. Measured on
 * restate-server 1.7.12 (hyper), the same on ingress and admin: a request target longer than
 * 65,534 bytes answers 414, more than 100 header fields or a head over ~435 KiB answer 431, and
 * a head that does not parse answers 400; all with an empty body and `connection: close`.
 * Node's own defaults differ (16 KiB heads, no 414), so they are set here.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';

export const MAX_REQUEST_TARGET_BYTES = 65_534;
export const MAX_HEADER_FIELDS = 100;
/** hyper's read buffer limit, as measured (a 445,585-byte header value was the first refused). */
export const MAX_HEAD_BYTES = 445_600;

type Refusal = 400 | 408 | 414 | 431;

function refuse(res: http.ServerResponse, status: Refusal): void {
  res.writeHead(status, { connection: 'close', 'content-length': '0' });
  res.end();
}

/** For heads Node's parser rejects: there is no response object, so the answer is written raw. */
function refuseRaw(socket: Duplex, status: Refusal): void {
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
}

/** `handler`: a Koa app's `callback()`, whose promise never rejects (Koa answers its own errors). */
export function createListener(handler: (req: http.IncomingMessage, res: http.ServerResponse) => unknown): http.Server {
  const server = http.createServer({ maxHeaderSize: MAX_HEAD_BYTES }, (req, res) => {
    if ((req.url?.length ?? 0) > MAX_REQUEST_TARGET_BYTES) return refuse(res, 414);
    if (req.rawHeaders.length / 2 > MAX_HEADER_FIELDS) return refuse(res, 431);
    handler(req, res);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A client that went away needs no answer.
    if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    if (err.code === 'HPE_HEADER_OVERFLOW') return refuseRaw(socket, 431);
    refuseRaw(socket, err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400);
  });
  return server;
}
