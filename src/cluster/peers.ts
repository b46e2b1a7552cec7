/**
 * Node-to-node calls on the node port: one forwarded runtime operation per POST to
 * `/cluster/rpc` (`Runtime.serve` on the owner), over kept-alive HTTP/1.1 connections.
 * node:http rather than fetch: a forwarded call or attach may wait for its invocation as long
 * as it runs, and fetch gives up on a response whose head takes more than five minutes.
 */
import http from 'node:http';
import type { Runtime } from '../runtime/runtime.js';
import type { ForwardedOp } from '../runtime/types.js';
import { decode, encode, errorFromWire, errorToWire, type WireError } from './wire.js';

export const RPC_PATH = '/cluster/rpc';

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

const agent = new http.Agent({ keepAlive: true });

/** Calls `op` on the node at `baseUrl`; rejects with the owner's error, or `PeerUnreachable`. */
export function callPeer(baseUrl: string, partition: number, op: ForwardedOp, args: unknown[]): Promise<unknown> {
  const body = encode({ partition, op, args } satisfies RpcRequest);
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(RPC_PATH, baseUrl),
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(new PeerUnreachable(err.message, true)));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new PeerUnreachable(`node at ${baseUrl} answered ${res.statusCode}`, true));
          const reply = decode(Buffer.concat(chunks).toString('utf8')) as RpcReply;
          if ('error' in reply) reject(errorFromWire(reply.error));
          else resolve(reply.value);
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => reject(new PeerUnreachable(`node at ${baseUrl}: ${err.message}`, err.code !== 'ECONNREFUSED')));
    req.end(body);
  });
}

/** The node port's handler of forwarded operations; false for any other request. */
export function rpcHandler(runtime: Runtime): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  return (req, res) => {
    if ((req.url ?? '').split('?')[0] !== RPC_PATH) return false;
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-length': 0 }).end();
      return true;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (reply: RpcReply) => {
        const text = encode(reply);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      };
      let call: RpcRequest;
      try {
        call = decode(Buffer.concat(chunks).toString('utf8')) as RpcRequest;
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
