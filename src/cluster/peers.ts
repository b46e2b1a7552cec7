/**
 * Node-to-node calls on the node port: one forwarded runtime operation per POST to
 * `/cluster/rpc` (`Runtime.serve` on the owner), and announcements of changes to what the
 * nodes share (`/cluster/announce`: the registry), each a stream of one h2c session per peer:
 * multiplexed on one connection, they cost less CPU per request than a pool of kept-alive
 * HTTP/1.1 connections (docs/architecture.md has the figures). node:http2 rather than fetch: a
 * forwarded call or attach may wait for its invocation as long as it runs, and fetch gives up
 * on a response whose head takes more than five minutes. The node port still answers HTTP/1.1
 * too (a node of an older version forwards so).
 */
import http2 from 'node:http2';
import type { Runtime } from '../runtime/runtime.js';
import type { ForwardedOp } from '../runtime/types.js';
import type { NodeHandler, NodeResponse } from '../telemetry/node-endpoint.js';
import { decode, encode, errorFromWire, errorToWire, type WireError } from './wire.js';

export const RPC_PATH = '/cluster/rpc';
/** Where a node hears of a change another node made (`tellPeer`). */
const ANNOUNCE_PATH = '/cluster/announce';

interface RpcRequest {
  partition: number;
  op: ForwardedOp;
  args: unknown[];
}

type RpcReply = { value?: unknown } | { error: WireError };

/** The connection failed before or while the owner answered: `sent` says whether it may have acted. */
export class PeerUnreachable extends Error {
  constructor(
    message: string,
    readonly sent: boolean,
  ) {
    super(message);
  }
}

/** A peer that does not complete the connection by then (its host is gone) fails the requests waiting for it. */
const CONNECT_TIMEOUT_MS = 5000;

const sessions = new Map<string, http2.ClientHttp2Session>();
/** Sessions that reached their peer: a request that failed on any other was not sent. */
const connected = new WeakSet<http2.ClientHttp2Session>();

/** The session to `baseUrl`, opened if there is none: one that closes, fails or hears GOAWAY is replaced. */
function sessionTo(baseUrl: string, options: http2.SessionOptions): http2.ClientHttp2Session {
  const open = sessions.get(baseUrl);
  if (open && !open.closed && !open.destroyed) return open;
  const session = http2.connect(baseUrl, options);
  sessions.set(baseUrl, session);
  const retire = () => {
    if (sessions.get(baseUrl) === session) sessions.delete(baseUrl);
  };
  const connecting = setTimeout(
    () => session.destroy(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`)),
    CONNECT_TIMEOUT_MS,
  );
  session.once('connect', () => {
    clearTimeout(connecting);
    connected.add(session);
  });
  session.on('close', () => {
    clearTimeout(connecting);
    retire();
  });
  session.on('goaway', retire);
  // The requests on it fail with the same error (their streams): here it only retires the session.
  session.on('error', retire);
  // As an idle kept-alive socket: the session alone does not keep the process running.
  session.unref();
  return session;
}

/**
 * POSTs `body` to `path` on the node at `baseUrl`; resolves with its status and answer, rejects
 * with `PeerUnreachable`. `sizes` sizes a new session (`sessionOptions` of protocol/transport.ts).
 */
function post(
  baseUrl: string,
  path: string,
  body: string,
  sizes: http2.SessionOptions,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const peer = sessionTo(baseUrl, sizes);
    let stream: http2.ClientHttp2Stream | undefined;
    // Not sent: the session never reached the peer, or the peer refused the stream unread
    // (REFUSED_STREAM, as a node going away does with what crossed its GOAWAY).
    const unreachable = (err: Error) =>
      reject(
        new PeerUnreachable(
          `node at ${baseUrl}: ${err.message}`,
          connected.has(peer) && stream?.rstCode !== http2.constants.NGHTTP2_REFUSED_STREAM,
        ),
      );
    try {
      stream = peer.request({
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
    } catch (err) {
      return reject(new PeerUnreachable(`node at ${baseUrl}: ${(err as Error).message}`, false));
    }
    let status = 0;
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', unreachable);
    stream.on('end', () => resolve({ status, text: Buffer.concat(chunks).toString('utf8') }));
    // Reset without an error code before its answer ended (after 'end' this settles nothing).
    stream.on('close', () => unreachable(new Error('the stream closed before its answer')));
    stream.end(body);
  });
}

/** Calls `op` on the node at `baseUrl`; rejects with the owner's error, or `PeerUnreachable`. */
export async function callPeer(
  baseUrl: string,
  partition: number,
  op: ForwardedOp,
  args: unknown[],
  sizes: http2.SessionOptions,
): Promise<unknown> {
  const { status, text } = await post(baseUrl, RPC_PATH, encode({ partition, op, args } satisfies RpcRequest), sizes);
  if (status !== 200) throw new PeerUnreachable(`node at ${baseUrl} answered ${status}`, true);
  const reply = decode(text) as RpcReply;
  if ('error' in reply) throw errorFromWire(reply.error);
  return reply.value;
}

/** What a node tells the others that changed in what they all share: today the registry. */
export type Announcement = 'registry';

/** Tells the node at `baseUrl` of a change; resolves once it has taken it in. */
export async function tellPeer(baseUrl: string, what: Announcement, sizes: http2.SessionOptions): Promise<void> {
  const { status } = await post(baseUrl, ANNOUNCE_PATH, JSON.stringify({ what }), sizes);
  if (status !== 204) throw new PeerUnreachable(`node at ${baseUrl} answered ${status}`, true);
}

/**
 * The node port's handler of forwarded operations and of announcements (`heard` takes one in:
 * the registry read again); false for any other request.
 */
export function rpcHandler(runtime: Runtime, heard: (what: Announcement) => Promise<void>): NodeHandler {
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== RPC_PATH && path !== ANNOUNCE_PATH) return false;
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-length': 0 }).end();
      return true;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (path === ANNOUNCE_PATH) return announced(text, heard, res);
      const answer = (reply: RpcReply) => {
        const body = encode(reply);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      };
      let call: RpcRequest;
      try {
        call = decode(text) as RpcRequest;
      } catch (err) {
        return answer({ error: errorToWire(err) });
      }
      runtime.serve(call.partition, call.op, call.args).then(
        (value) => answer({ value }),
        (err: unknown) => answer({ error: errorToWire(err) }),
      );
    });
    return true;
  };
}

/** 204 once the announcement is taken in, 500 when that failed, 400 for what is not one. */
function announced(text: string, heard: (what: Announcement) => Promise<void>, res: NodeResponse): void {
  let what: unknown;
  try {
    what = (JSON.parse(text) as { what?: unknown }).what;
  } catch {
    what = undefined;
  }
  if (what !== 'registry') {
    res.writeHead(400, { 'content-length': 0 }).end();
    return;
  }
  heard(what).then(
    () => res.writeHead(204, { 'content-length': 0 }).end(),
    () => res.writeHead(500, { 'content-length': 0 }).end(),
  );
}
