/**
 * How the admin API reads JSON bodies and writes responses, with the reference's exact
 * content types (reference-behavior.md §1.2): `application/json` (no charset) for JSON,
 * `text/plain; charset=utf-8` for extractor errors, no content type at all for empty bodies.
 */
import type { Context } from 'koa';
import { AdminTextError } from './errors.js';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { SerdeError, parseJsonTree, type JsonDocument } from '../http/serde-json.js';

/** A number serde prints as a float: `2.0`, not `2` (e.g. `exponentiation_factor`). */
export class JsonFloat {
  constructor(readonly value: number) {}
}

/** JSON.stringify with JsonFloat support; `undefined` members are left out. */
export function stringifyJson(value: unknown): string {
  if (value instanceof JsonFloat) {
    const v = value.value;
    return Number.isInteger(v) ? v.toFixed(1) : JSON.stringify(v);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : stringifyJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value))
      if (v !== undefined) parts.push(`${JSON.stringify(k)}:${stringifyJson(v)}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function sendJson(ctx: Context, status: number, value: unknown, headers: Record<string, string> = {}): void {
  ctx.status = status;
  ctx.set(headers);
  ctx.set('content-type', 'application/json');
  ctx.body = stringifyJson(value);
}

export function sendText(ctx: Context, status: number, text: string): void {
  ctx.status = status;
  ctx.set('content-type', 'text/plain; charset=utf-8');
  ctx.body = text;
}

/** `content-length: 0` and no content type (Koa's `body = null` would turn the status into 204). */
export function sendEmpty(ctx: Context, status: number, headers: Record<string, string> = {}): void {
  ctx.status = status;
  ctx.set(headers);
  ctx.body = '';
  ctx.remove('content-type');
}

/** axum accepts `application/json` and any `application/*+json`. */
const JSON_TYPES = ['application/json', 'application/*+json'];

const BODY_LIMIT = 10 * 1024 * 1024;

/**
 * Reads JSON bodies as text (koa-body, with its size limit), so that `readJsonBody` parses them
 * as serde does and answers with the reference's error texts; koa-body's own JSON parser would
 * answer with JSON.parse's. Other content types stay unread.
 */
export const readBodies = koaBody({
  json: false,
  urlencoded: false,
  multipart: false,
  text: true,
  textTypes: JSON_TYPES,
  textLimit: BODY_LIMIT,
  parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  onError: (err) => {
    if ((err as { status?: number }).status === 413)
      throw new AdminTextError(413, 'Failed to buffer the request body: length limit exceeded');
    throw err;
  },
});

/**
 * Parses the JSON body `readBodies` read, as axum's `Json` extractor would: 415 without a JSON
 * content type, 400 on a syntax error (text/plain, §1.2).
 */
export function readJsonBody(ctx: Context): JsonDocument {
  const text: unknown = ctx.request.body;
  if (!ctx.is(JSON_TYPES) || typeof text !== 'string')
    throw new AdminTextError(415, 'Expected request with `Content-Type: application/json`');
  try {
    return parseJsonTree(Buffer.from(text, 'utf8'));
  } catch (err) {
    if (err instanceof SerdeError)
      throw new AdminTextError(400, `Failed to parse the request body as JSON: ${err.message}`);
    throw err;
  }
}
