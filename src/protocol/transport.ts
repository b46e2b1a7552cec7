/**
 * Invocation streams towards a deployment: `POST {uri}/invoke/{service}/{handler}`.
 *
 * h2c (HTTP/2 with prior knowledge) for bidi deployments, many streams sharing a few sessions
 * (service-protocol.md §2); HTTP/1.1 with a chunked request body for request/response ones
 * (§15). Callers see one shape either way: write frames, half-close, abort, and callbacks.
 */
import http from 'node:http';
import https from 'node:https';
import http2 from 'node:http2';
import type { RequestSigner } from './request-identity.js';

export interface StreamHandlers {
  onResponse(status: number, headers: Record<string, string | string[] | undefined>): void;
  onData(chunk: Buffer): void;
  /** The response ended normally. */
  onEnd(): void;
  /** The stream broke (reset, connection lost, abort). Called at most once, never after onEnd. */
  onError(err: Error): void;
}

export interface InvocationStream {
  write(data: Buffer): void;
  /** Half-closes the request body; the response may go on. */
  endRequest(): void;
  abort(reason: string): void;
  readonly requestOpen: boolean;
}

export interface StreamTarget {
  /** Deployment URI, normalised with a trailing slash. */
  uri: string;
  path: string;
  http11: boolean;
  headers: Record<string, string>;
}

/** Streams per HTTP/2 session before another session is opened (Restate uses 128). */
const STREAMS_PER_SESSION = 100;

const MiB = 1024 * 1024;

/** What the h2c sessions must fit: the largest message one stream may carry either way. */
export interface TransportLimits {
  /** Bytes; the request size limit (the input of one invocation, and so its Start + replay). */
  maxMessageBytes: number;
}

/**
 * Node refuses every stream of a session whose buffered data passes `maxSessionMemory` (MB,
 * default 10) with NGHTTP2_ENHANCE_YOUR_CALM. A write is buffered whole until the peer's
 * flow-control window takes it, so one message up to the limit, in each direction, plus the
 * other streams' traffic, must fit. The h2c sessions between nodes (cluster/peers.ts) carry
 * such messages too.
 */
export function sessionOptions(limits: TransportLimits): http2.SessionOptions {
  return {
    maxSessionMemory: Math.max(10, Math.ceil((2 * limits.maxMessageBytes) / MiB) + 10),
    // Our receive windows: Restate's 2 MiB per stream and 5 MiB per connection (§17).
    settings: { initialWindowSize: 2 * MiB },
  };
}

interface PooledSession {
  session: http2.ClientHttp2Session;
  streams: number;
  /** Takes the session out of the pool: new streams go to another one. */
  retire(): void;
}

/** Stream resets that say the session itself is unusable, not just this stream. */
const SESSION_BROKEN = new Set<number>([
  http2.constants.NGHTTP2_ENHANCE_YOUR_CALM,
  http2.constants.NGHTTP2_INTERNAL_ERROR,
]);

export class Transport {
  private readonly sessions = new Map<string, PooledSession[]>();
  private readonly options: http2.ClientSessionOptions;

  /** With a signer, every stream carries the request identity headers (request-identity.ts). */
  constructor(
    limits: TransportLimits,
    private readonly signer?: RequestSigner,
  ) {
    this.options = sessionOptions(limits);
  }

  open(target: StreamTarget, handlers: StreamHandlers): InvocationStream {
    return target.http11 ? this.openHttp11(target, handlers) : this.openH2(target, handlers);
  }

  close(): void {
    for (const list of this.sessions.values()) for (const s of list) s.session.destroy();
    this.sessions.clear();
  }

  private session(origin: string): PooledSession {
    const list = this.sessions.get(origin) ?? [];
    this.sessions.set(origin, list);
    const free = list.find((s) => s.streams < STREAMS_PER_SESSION && !s.session.closed && !s.session.destroyed);
    if (free) return free;
    const session = http2.connect(origin, this.options);
    session.on('connect', () => session.setLocalWindowSize(5 * MiB));
    const pooled: PooledSession = { session, streams: 0, retire: () => {} };
    pooled.retire = () => {
      const i = list.indexOf(pooled);
      if (i >= 0) list.splice(i, 1);
    };
    session.on('error', pooled.retire);
    session.on('close', pooled.retire);
    session.on('goaway', pooled.retire);
    // Idle sessions must not keep the process alive on shutdown.
    session.unref();
    list.push(pooled);
    return pooled;
  }

  /** The target's headers, plus the identity headers for `url` when requests are signed. */
  private headersFor(target: StreamTarget, url: URL): Record<string, string> {
    if (!this.signer) return target.headers;
    // The invocation request carries the object key URL-encoded (service-protocol.md §4).
    const key = target.headers['x-restate-service-key'];
    return {
      ...target.headers,
      ...this.signer.headers(url.pathname, key === undefined ? undefined : decodeURIComponent(key)),
    };
  }

  private openH2(target: StreamTarget, handlers: StreamHandlers): InvocationStream {
    const url = new URL(target.path, target.uri);
    const pooled = this.session(url.origin);
    let finished = false;
    let requestOpen = true;
    const fail = (err: Error) => {
      if (finished) return;
      finished = true;
      handlers.onError(err);
    };
    const req = pooled.session.request({
      ':method': 'POST',
      ':path': url.pathname + url.search,
      ...this.headersFor(target, url),
    });
    pooled.streams++;
    req.on('close', () => {
      pooled.streams--;
      // A session over its memory budget refuses all its streams, new ones too: replace it,
      // and let its other streams end (each fails and is retried on a fresh session).
      if (req.rstCode !== undefined && SESSION_BROKEN.has(req.rstCode)) {
        pooled.retire();
        pooled.session.close();
      }
      if (!finished) fail(new Error(`stream closed (code ${req.rstCode ?? 'none'})`));
    });
    req.on('response', (headers) => {
      handlers.onResponse(Number(headers[':status']), headers as Record<string, string | string[] | undefined>);
    });
    req.on('data', (chunk: Buffer) => {
      if (!finished) handlers.onData(chunk);
    });
    req.on('end', () => {
      if (finished) return;
      finished = true;
      handlers.onEnd();
    });
    req.on('error', fail);
    return {
      write: (data) => {
        if (requestOpen && !req.destroyed) req.write(data);
      },
      endRequest: () => {
        if (!requestOpen) return;
        requestOpen = false;
        if (!req.destroyed) req.end();
      },
      abort: (reason) => {
        requestOpen = false;
        fail(new Error(reason));
        req.close(http2.constants.NGHTTP2_CANCEL);
      },
      get requestOpen() {
        return requestOpen && !req.destroyed;
      },
    };
  }

  private openHttp11(target: StreamTarget, handlers: StreamHandlers): InvocationStream {
    const url = new URL(target.path, target.uri);
    const lib = url.protocol === 'https:' ? https : http;
    let finished = false;
    let requestOpen = true;
    const fail = (err: Error) => {
      if (finished) return;
      finished = true;
      handlers.onError(err);
    };
    const req = lib.request(url, {
      method: 'POST',
      headers: { ...this.headersFor(target, url), 'transfer-encoding': 'chunked' },
    });
    req.on('response', (res) => {
      handlers.onResponse(res.statusCode ?? 0, res.headers);
      res.on('data', (chunk: Buffer) => {
        if (!finished) handlers.onData(chunk);
      });
      res.on('end', () => {
        if (finished) return;
        finished = true;
        handlers.onEnd();
      });
      res.on('error', fail);
      res.on('close', () => fail(new Error('response closed before its end')));
    });
    req.on('error', fail);
    return {
      write: (data) => {
        if (requestOpen) req.write(data);
      },
      endRequest: () => {
        if (!requestOpen) return;
        requestOpen = false;
        req.end();
      },
      abort: (reason) => {
        requestOpen = false;
        fail(new Error(reason));
        req.destroy();
      },
      get requestOpen() {
        return requestOpen;
      },
    };
  }
}
