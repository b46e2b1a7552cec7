/**
 * The node port (5122, as Restate's): `GET /metrics` for Prometheus, and whatever `extra`
 * handles (node-to-node calls, src/cluster/peers.ts). A plain node:http handler, so a scrape
 * never goes through the admin API's middleware.
 *
 * One listening socket speaks both HTTP/1.1 (Prometheus, nodes of an older version) and h2c,
 * which other nodes forward over (one multiplexed session per peer): each connection goes to
 * the protocol its first bytes name, the HTTP/2 client preface or anything else.
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { metricsText } from './metrics.js';

/** What the node port's handlers use of a request, the same over HTTP/1.1 and h2c. */
export interface NodeRequest extends Pick<Readable, 'on'> {
  readonly url?: string;
  readonly method?: string;
}

export interface NodeResponse {
  writeHead(status: number, headers: http.OutgoingHttpHeaders): NodeResponse;
  end(): unknown;
  end(body: string): unknown;
}

export type NodeHandler = (req: NodeRequest, res: NodeResponse) => boolean;

/** The start of the HTTP/2 client preface (RFC 9113 §3.4); no HTTP/1.1 request starts so. */
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0');

/**
 * An HTTP/1.1 server that hands h2c connections to an HTTP/2 server of the same handler. Its
 * `closeIdleConnections` / `closeAllConnections` (what a graceful stop calls) cover the h2c
 * sessions too: GOAWAY, so the streams in flight finish and the peer opens its next session
 * elsewhere; then destroyed. And the connections whose protocol is not known yet, which belong
 * to neither server: left open, they kept `close()` from ever completing.
 */
class NodeEndpoint extends http.Server {
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  /** Accepted, but their first bytes have not named a protocol yet. */
  private readonly undecided = new Set<Socket>();

  constructor(h2Options: http2.SessionOptions, handle: (req: NodeRequest, res: NodeResponse) => void) {
    super(handle);
    const h2 = http2.createServer(h2Options, handle);
    h2.on('session', (session: http2.ServerHttp2Session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
    });
    const http1 = this.listeners('connection') as ((socket: Socket) => void)[];
    this.removeAllListeners('connection');
    this.on('connection', (socket: Socket) => {
      let head = Buffer.alloc(0);
      this.undecided.add(socket);
      // The server is half-open (as node:http's are): a peer that leaves before naming its
      // protocol would otherwise leave this end open, with nobody to close it.
      const left = () => socket.destroy();
      const sniff = () => {
        for (let chunk: Buffer | null; (chunk = socket.read() as Buffer | null) !== null;)
          head = Buffer.concat([head, chunk]);
        const n = Math.min(head.length, H2_PREFACE.length);
        const h2c = head.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
        // A prefix of the preface so far (or nothing): which protocol is not known yet.
        if (h2c && n < H2_PREFACE.length) return;
        socket.off('readable', sniff);
        socket.off('end', left);
        this.undecided.delete(socket);
        socket.unshift(head);
        if (h2c) h2.emit('connection', socket);
        else for (const listener of http1) listener.call(this, socket);
      };
      socket.on('readable', sniff);
      socket.on('end', left);
      socket.on('close', () => this.undecided.delete(socket));
    });
  }

  /** No request of theirs is in flight: they are idle as much as they are anything. */
  private closeUndecided(): void {
    for (const socket of this.undecided) socket.destroy();
  }

  override closeIdleConnections(): void {
    super.closeIdleConnections();
    this.closeUndecided();
    for (const session of this.sessions) session.close();
  }

  override closeAllConnections(): void {
    super.closeAllConnections();
    this.closeUndecided();
    for (const session of this.sessions) session.destroy();
  }
}

/** `h2Options` sizes the h2c sessions (`sessionOptions` of protocol/transport.ts). */
export function createNodeEndpoint(h2Options: http2.SessionOptions, extra?: NodeHandler): http.Server {
  return new NodeEndpoint(h2Options, (req, res) => {
    if (extra?.(req, res)) return;
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return end(res, 404);
    if (req.method !== 'GET' && req.method !== 'HEAD') return end(res, 405, { allow: 'GET,HEAD' });
    metricsText().then(
      ({ contentType, body }) => {
        const head = res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
        if (req.method === 'HEAD') head.end();
        else head.end(body);
      },
      () => end(res, 500),
    );
  });
}

function end(res: NodeResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-length': 0 }).end();
}
