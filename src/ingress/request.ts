/**
 * Turning an ingress HTTP request into the parts of an invocation: the raw body (with the size
 * limit), the headers recorded in the Input entry, the content-type check against the
 * handler's declared input, and the `?delay=` and `?at=` parameters.
 */
import type { Context } from 'koa';
import { IngressError } from './errors.js';
import type { HandlerMeta } from '../registry/types.js';
import { inputFailure } from '../registry/payload-rules.js';
import { parseDuration } from '../registry/durations.js';
import type { Header } from '../protocol/messages.js';
import { parseRfc3339 } from '../timestamps.js';

/** Path segments after `prefix`, each URL-decoded; a `%2F` stays inside its segment. */
export function segmentsAfter(path: string, prefix: string): string[] {
  const rest = path.slice(prefix.length);
  if (rest === '') return [];
  return rest
    .replace(/^\//, '')
    .split('/')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}

export async function readBody(ctx: Context, limit: number): Promise<Buffer> {
  const req = ctx.req;
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) {
    req.resume();
    throw tooLarge(limit);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      // Keep draining (and dropping) the rest, so the 413 reaches a client still sending.
      req.off('data', onData);
      req.resume();
      reject(tooLarge(limit));
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** The rest of the body is drained and dropped (`resume`), so the client reads the answer. */
function tooLarge(limit: number): IngressError {
  return new IngressError(413, `payload too large: the request body exceeds the limit of ${limit} bytes`);
}

/**
 * The Input entry's headers: `x-restate-ingress-path` first, then the client's headers in the
 * order they came, without `host` and `idempotency-key` (reference-behavior.md §2.2).
 */
export function inputHeaders(ctx: Context): Header[] {
  const headers: Header[] = [{ key: 'x-restate-ingress-path', value: ctx.url }];
  const raw = ctx.req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i]!.toLowerCase();
    if (key === 'host' || key === 'idempotency-key' || key.startsWith(':')) continue;
    headers.push({ key, value: raw[i + 1]! });
  }
  return headers;
}

/** reference-behavior.md §2.10: the server checks the content-type (and that JSON is not empty), not the content. */
export function checkInput(handler: HandlerMeta, contentType: string | undefined, body: Buffer): void {
  const why = inputFailure(handler.input, contentType, body);
  if (why !== undefined) throw new IngressError(400, `input validation error: ${why}`);
}

/** `?delay=` on sends: ISO 8601 or the friendly form (reference-behavior.md §2.3). */
export function parseDelay(raw: string): number {
  try {
    return parseDuration(raw);
  } catch (err) {
    throw new IngressError(400, `bad delay query parameter, must be a ISO8601 duration: ${(err as Error).message}`);
  }
}

/**
 * `?at=` on sends (a redstate addition, restatedev/restate#3916): an RFC 3339 timestamp. A `+`
 * of an offset left unencoded in the query arrives as a space, and is read as the `+` it was.
 */
export function parseAt(raw: string): number {
  const at = parseRfc3339(raw.replace(/ (\d{2}:\d{2})$/, '+$1'));
  if (at === undefined) {
    throw new IngressError(
      400,
      `bad at query parameter, must be a RFC 3339 timestamp such as 2026-12-01T09:30:00Z or 2026-12-01T10:30:00+01:00: '${raw}'`,
    );
  }
  return at;
}
