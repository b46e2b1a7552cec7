/**
 * Discovery client: `GET {uri}/discover` against a service endpoint (service-protocol.md §3),
 * over h2c with prior knowledge (the default for `http://`, like restate-server) or over
 * HTTP/1.1 when the deployment is registered with `use_http_11`.
 *
 * Failures become the admin errors the reference answers to `POST /deployments`
 * (reference-behavior.md §3.3): `[META0003] [META0003] error when calling '<uri>': …`, the code
 * repeated in the message as the reference does.
 */
import http from 'node:http';
import https from 'node:https';
import http2 from 'node:http2';
import { DiscoveryFailed, MetaCode } from '../errors.js';
import { ManifestError, SUPPORTED_MANIFEST_VERSIONS, validateManifest, type EndpointManifest } from './manifest.js';
import type { RequestSigner } from './request-identity.js';

export interface DiscoverOptions {
  useHttp11: boolean;
  additionalHeaders?: Record<string, string>;
  /** Whole exchange, connect to last body byte. */
  timeoutMs?: number;
  /** Signs the request (request-identity.ts). */
  signer?: RequestSigner;
}

export interface DiscoveryResult {
  manifest: EndpointManifest;
  /** The endpoint's `x-restate-server` header, e.g. `restate-sdk-typescript/1.17.2`. */
  sdkVersion?: string;
  manifestVersion: number;
}

/** The exact Accept header restate-server 1.7.12 sends [cap]. */
export const DISCOVERY_ACCEPT = SUPPORTED_MANIFEST_VERSIONS.map(
  (v) => `application/vnd.restate.endpointmanifest.v${v}+json`,
).join(', ');

/** restate-server adds `worker.invoker.additional-request-headers`, by default this one. */
const DEFAULT_HEADERS = { 'x-restate-cluster-name': 'localcluster' };

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

/** `base` + `/suffix`, whether or not `base` ends in a slash; keeps `base`'s path prefix. */
export function endpointUrl(base: string, suffix: string): string {
  return base.replace(/\/+$/, '') + '/' + suffix.replace(/^\/+/, '');
}

interface RawResponse {
  status: number;
  /** In received order, lower-case names, without HTTP/2 pseudo-headers. */
  headers: Array<[string, string]>;
  body: Buffer;
}

/** A failure before any response: which transport, and the Node error. */
class TransportError extends Error {
  constructor(
    readonly error: NodeJS.ErrnoException,
    readonly connected: boolean,
  ) {
    super(error.message);
  }
}

export async function discover(uri: string, opts: DiscoverOptions): Promise<DiscoveryResult> {
  const url = endpointUrl(uri, 'discover');
  const identity = opts.signer?.headers(new URL(url).pathname) ?? {};
  const headers: Record<string, string> = {
    accept: DISCOVERY_ACCEPT,
    ...DEFAULT_HEADERS,
    ...opts.additionalHeaders,
    ...identity,
  };
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let response: RawResponse;
  try {
    response = opts.useHttp11 ? await getHttp1(url, headers, timeoutMs) : await getHttp2(url, headers, timeoutMs);
  } catch (err) {
    throw transportFailure(uri, opts.useHttp11, err);
  }
  return readManifest(uri, response);
}

function metaError(code: string, message: string): DiscoveryFailed {
  return new DiscoveryFailed(`[${code}] [${code}] ${message}`, code);
}

function readManifest(uri: string, res: RawResponse): DiscoveryResult {
  if (res.status < 200 || res.status >= 300) {
    // §3.3: "got status code '404'. Make sure … Response headers: {"content-length": "0", …}. Body: "
    const hint =
      res.status === 404
        ? ' Make sure the provided URI has the correct path where the Restate SDK endpoint is mounted.'
        : '';
    const headers = `{${res.headers.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(', ')}}`;
    throw metaError(
      MetaCode.discoveryFailed,
      `got status code '${res.status}'.${hint} Response headers: ${headers}. Body: ${res.body.toString('utf8')}`,
    );
  }
  const header = (name: string) => res.headers.find(([k]) => k === name)?.[1];
  const contentType = header('content-type') ?? '';
  const version = /^application\/vnd\.restate\.endpointmanifest\.v(\d+)\+json\s*(;|$)/i.exec(contentType.trim());
  const manifestVersion = version ? Number(version[1]) : NaN;
  if (!(SUPPORTED_MANIFEST_VERSIONS as readonly number[]).includes(manifestVersion)) {
    throw metaError(
      MetaCode.discoveryFailed,
      `error when calling '${uri}': unsupported endpoint manifest content type '${contentType}', expected one of ${DISCOVERY_ACCEPT}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body.toString('utf8'));
  } catch (err) {
    throw metaError(
      MetaCode.discoveryFailed,
      `error when calling '${uri}': cannot decode the endpoint manifest: ${(err as Error).message}`,
    );
  }
  let manifest: EndpointManifest;
  try {
    manifest = validateManifest(parsed);
  } catch (err) {
    if (!(err instanceof ManifestError)) throw err;
    throw metaError(MetaCode.discoveryFailed, `error when calling '${uri}': invalid endpoint manifest: ${err.message}`);
  }
  const sdkVersion = header('x-restate-server');
  return sdkVersion === undefined ? { manifest, manifestVersion } : { manifest, manifestVersion, sdkVersion };
}

/** Rust's wording of the OS errors the reference prints (Linux errno numbers). */
const OS_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'Connection refused (os error 111)',
  ECONNRESET: 'Connection reset by peer (os error 104)',
  EHOSTUNREACH: 'No route to host (os error 113)',
  ENETUNREACH: 'Network is unreachable (os error 101)',
  ETIMEDOUT: 'Connection timed out (os error 110)',
  EPIPE: 'Broken pipe (os error 32)',
};

function describe(err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN')
    return 'dns error: failed to lookup address information: Name or service not known';
  if (err.code === 'ETIMEOUT_DISCOVERY') return 'request timed out';
  return (err.code && OS_ERRORS[err.code]) ?? err.message;
}

/** Node wraps a failed connect in a cancelled-stream error; the reason is its `cause`. */
function rootCause(err: NodeJS.ErrnoException): NodeJS.ErrnoException {
  let e = err;
  while (e.cause instanceof Error) e = e.cause as NodeJS.ErrnoException;
  return e;
}

function transportFailure(uri: string, useHttp11: boolean, err: unknown): DiscoveryFailed {
  if (err instanceof DiscoveryFailed) return err;
  const transport = err instanceof TransportError ? err : new TransportError(err as NodeJS.ErrnoException, false);
  const cause = rootCause(transport.error);
  const prefix = `error when calling '${uri}':`;
  if (!transport.connected) {
    const what = useHttp11 ? 'client error (Connect) caused by: tcp connect error' : 'h2 pool connection error';
    return metaError(MetaCode.discoveryFailed, `${prefix} ${what}: ${describe(cause)}`);
  }
  if (cause.code === 'ETIMEOUT_DISCOVERY') return metaError(MetaCode.discoveryFailed, `${prefix} ${describe(cause)}`);
  if (useHttp11) {
    // An h2c-only endpoint answers an HTTP/1.1 request with an HTTP/2 GOAWAY frame (§3.3).
    return metaError(
      MetaCode.discoveryFailed,
      `${prefix} server possibly supports only HTTP/2, consider discovering without --use-http1.1.\nReason: client error (SendRequest) caused by: invalid HTTP version parsed`,
    );
  }
  // An HTTP/1.1-only endpoint rejects the h2 connection preface (§3.3).
  return metaError(
    MetaCode.http11Only,
    `${prefix} server possibly supports only HTTP1.1, consider discovery with --use-http1.1.`,
  );
}

function timeoutError(): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error('discovery timed out');
  err.code = 'ETIMEOUT_DISCOVERY';
  return err;
}

function getHttp1(url: string, headers: Record<string, string>, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const client = url.startsWith('https:') ? https : http;
    let connected = false;
    let settled = false;
    const finish = (err: NodeJS.ErrnoException | undefined, value?: RawResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(new TransportError(err, connected || err.code === 'ETIMEOUT_DISCOVERY'));
      else resolve(value!);
    };
    const req = client.request(url, { method: 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_MANIFEST_BYTES) chunks.push(c);
        else {
          finish(new Error('endpoint manifest too large'));
          req.destroy();
        }
      });
      res.on('end', () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
          pairs.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        finish(undefined, { status: res.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks) });
      });
      res.on('error', (e) => finish(e));
      res.on('close', () => finish(new Error('connection closed before the end of the response')));
    });
    const timer = setTimeout(() => {
      finish(timeoutError());
      req.destroy();
    }, timeoutMs);
    req.on('socket', (socket) => {
      socket.once('connect', () => (connected = true));
      socket.once('secureConnect', () => (connected = true));
    });
    req.on('error', (e: NodeJS.ErrnoException) => finish(e));
    req.end();
  });
}

function getHttp2(url: string, headers: Record<string, string>, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    let connected = false;
    let settled = false;
    const session = http2.connect(target.origin);
    const finish = (err: unknown, value?: RawResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.close();
      if (!session.destroyed) session.destroy();
      if (err)
        reject(err instanceof TransportError ? err : new TransportError(err as NodeJS.ErrnoException, connected));
      else resolve(value!);
    };
    const timer = setTimeout(() => finish(new TransportError(timeoutError(), true)), timeoutMs);
    session.on('connect', () => (connected = true));
    session.on('error', (e) => finish(e));
    // An HTTP/1.1 server answers the preface with a 400 and closes: the session just ends.
    session.on('close', () => finish(new TransportError(new Error('connection closed before a response'), connected)));
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request({ ':method': 'GET', ':path': target.pathname + target.search, ...headers });
    } catch (err) {
      // E.g. a connection-specific header among the additional headers, which HTTP/2 forbids.
      finish(err);
      return;
    }
    let status = 0;
    const pairs: Array<[string, string]> = [];
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('response', (h) => {
      status = Number(h[':status']);
      for (const [k, v] of Object.entries(h)) {
        if (k.startsWith(':') || v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [String(v)]) pairs.push([k, one]);
      }
    });
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_MANIFEST_BYTES) finish(new TransportError(new Error('endpoint manifest too large'), true));
      else chunks.push(c);
    });
    stream.on('end', () => finish(undefined, { status, headers: pairs, body: Buffer.concat(chunks) }));
    stream.on('error', (e) => finish(e));
    stream.end();
  });
}
