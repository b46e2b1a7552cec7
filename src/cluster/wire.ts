/**
 * The node-to-node encoding of forwarded operations: JSON, with bytes (base64) and maps kept
 * as what they were, and domain errors sent as their class name so the receiving node's HTTP
 * funnels answer them as if they had happened there.
 */
import {
  Conflict,
  DiscoveryFailed,
  DomainError,
  Gone,
  InvalidRequest,
  Misdirected,
  NotFound,
  NotImplemented,
  TooManyRequests,
  Unavailable,
  Unprocessable,
} from '../errors.js';
import { StoreUnavailable } from '../store/types.js';

export function encode(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
    const raw = this[key];
    if (raw instanceof Uint8Array)
      return { $bytes: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64') };
    if (raw instanceof Map) return { $map: [...raw.entries()] };
    return v;
  });
}

export function decode(text: string): unknown {
  return JSON.parse(text, (_, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      if (typeof o['$bytes'] === 'string') return Buffer.from(o['$bytes'], 'base64');
      if (Array.isArray(o['$map'])) return new Map(o['$map'] as Array<[unknown, unknown]>);
    }
    return v;
  });
}

export interface WireError {
  kind: string;
  message: string;
  code: string | null;
  partition?: number;
  mayHaveApplied?: boolean;
}

const DOMAIN: Record<string, new (message: string, code?: string | null) => DomainError> = {
  NotFound,
  Conflict,
  InvalidRequest,
  NotImplemented,
  Gone,
  Unprocessable,
  TooManyRequests,
  DiscoveryFailed,
  Unavailable,
};

export function errorToWire(err: unknown): WireError {
  if (err instanceof Misdirected)
    return { kind: 'Misdirected', message: err.message, code: null, partition: err.partition };
  // Whether a commit may have landed travels too: the sender settles it (store/confirmed.ts).
  if (err instanceof StoreUnavailable)
    return { kind: 'StoreUnavailable', message: err.message, code: null, mayHaveApplied: err.mayHaveApplied };
  if (err instanceof DomainError) return { kind: err.name, message: err.message, code: err.code };
  return { kind: 'Error', message: err instanceof Error ? err.message : String(err), code: null };
}

export function errorFromWire(e: WireError): Error {
  if (e.kind === 'Misdirected') return new Misdirected(e.partition ?? -1);
  if (e.kind === 'StoreUnavailable') return new StoreUnavailable(e.message, e.mayHaveApplied ?? true);
  const Domain = DOMAIN[e.kind];
  return Domain ? new Domain(e.message, e.code) : new Error(e.message);
}
