/**
 * Bytes (handler input and output, state values, awakeable values) as an agent writes and
 * reads them. The SDKs' default serde is JSON, so a JSON value goes in as its JSON text, and
 * what comes out is shown as JSON when it parses, else as text, else as base64.
 */
import { InvalidRequest } from '../errors.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export type ShownValue =
  | { encoding: 'empty' }
  | { encoding: 'json'; value: unknown }
  | { encoding: 'text'; value: string }
  | { encoding: 'base64'; value: string };

export function shownValue(bytes: Uint8Array): ShownValue {
  if (bytes.length === 0) return { encoding: 'empty' };
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return { encoding: 'base64', value: Buffer.from(bytes).toString('base64') };
  }
  try {
    return { encoding: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { encoding: 'text', value: text };
  }
}

/** A value as a request body: its JSON text, or, with a content type, the string as it is. */
export function bodyOf(value: unknown, contentType: string | undefined): { body: Buffer; contentType?: string } {
  if (value === undefined) return { body: Buffer.alloc(0) };
  if (contentType !== undefined) {
    if (typeof value !== 'string')
      throw new InvalidRequest('with content_type, input must be a string (sent as its UTF-8 bytes)');
    return { body: Buffer.from(value, 'utf8'), contentType };
  }
  return { body: Buffer.from(JSON.stringify(value), 'utf8'), contentType: 'application/json' };
}
