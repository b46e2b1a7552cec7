/**
 * Decoding of admin request bodies, path parameters and query strings into registry calls,
 * failing with the reference's extractor texts (reference-behavior.md §1.2, §3.3, §3.4):
 * 422 `Failed to deserialize the JSON body into the target type: …`, 400 `Invalid URL: …`,
 * 400 `Failed to deserialize query string: …`.
 */
import { AdminTextError } from './errors.js';
import { checkDeploymentId } from '../registry/deployment-id.js';
import { DurationParseError, parseDuration } from '../registry/durations.js';
import type { DeploymentPatch, RegisterRequest, ServicePatch } from '../registry/registry.js';
import type { RetryPolicy } from '../registry/types.js';
import { normaliseUri } from '../registry/uri.js';
import { describeUnexpected, type JsonDocument, type JsonNode } from '../http/serde-json.js';

type ObjectNode = Extract<JsonNode, { kind: 'object' }>;

const DESERIALIZE = 'Failed to deserialize the JSON body into the target type: ';

/** A field that did not fit; for untagged enums only the fact matters. */
class Mismatch extends Error {}

function untaggedFailure(name: string): AdminTextError {
  return new AdminTextError(422, `${DESERIALIZE}data did not match any variant of untagged enum ${name}`);
}

/** The value of `name` in an untagged-enum variant; serde refuses duplicate fields there too. */
function member(obj: ObjectNode, name: string): JsonNode | undefined {
  const found = obj.entries.filter(([k]) => k === name);
  if (found.length > 1) throw new Mismatch();
  return found[0]?.[1];
}

const optional = <T>(node: JsonNode | undefined, read: (n: JsonNode) => T): T | undefined =>
  node === undefined || node.kind === 'null' ? undefined : read(node);

function bool(node: JsonNode): boolean {
  if (node.kind !== 'bool') throw new Mismatch();
  return node.value;
}

function text(node: JsonNode): string {
  if (node.kind !== 'string') throw new Mismatch();
  return node.value;
}

/** RFC 9110 token characters for header names; values without CR, LF or NUL. */
function headerMap(node: JsonNode): Record<string, string> {
  if (node.kind !== 'object') throw new Mismatch();
  const out: Record<string, string> = {};
  for (const [k, v] of node.entries) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k) || v.kind !== 'string' || /[\r\n\0]/.test(v.value))
      throw new Mismatch();
    out[k.toLowerCase()] = v.value;
  }
  return out;
}

function uri(node: JsonNode): string {
  const normalised = normaliseUri(text(node));
  if (normalised === undefined) throw new Mismatch();
  return normalised;
}

export type RegisterBody = ({ kind: 'http' } & RegisterRequest) | { kind: 'lambda'; arn: string };

/**
 * `RegisterDeploymentRequest`, an untagged enum: the HTTP variant (needs `uri`) is tried first,
 * then the Lambda one (needs `arn`); `{"uri":…,"arn":…}` is therefore HTTP (§3.3).
 */
export function decodeRegister(doc: JsonDocument): RegisterBody {
  const root = doc.root;
  if (root.kind === 'object') {
    try {
      const u = member(root, 'uri');
      if (u === undefined) throw new Mismatch();
      const body: { kind: 'http' } & RegisterRequest = { kind: 'http', uri: uri(u) };
      const useHttp11 = member(root, 'use_http_11');
      if (useHttp11 !== undefined) body.useHttp11 = bool(useHttp11);
      const headers = optional(member(root, 'additional_headers'), headerMap);
      if (headers !== undefined) body.additionalHeaders = headers;
      const force = optional(member(root, 'force'), bool);
      if (force !== undefined) body.force = force;
      const dryRun = member(root, 'dry_run');
      if (dryRun !== undefined) body.dryRun = bool(dryRun);
      const breaking = member(root, 'breaking');
      if (breaking !== undefined) body.breaking = bool(breaking);
      const metadata = member(root, 'metadata');
      if (metadata !== undefined) stringMap(metadata);
      return body;
    } catch (err) {
      if (!(err instanceof Mismatch)) throw err;
    }
    try {
      const arn = member(root, 'arn');
      if (arn === undefined || !/^arn:/.test(text(arn))) throw new Mismatch();
      return { kind: 'lambda', arn: text(arn) };
    } catch (err) {
      if (!(err instanceof Mismatch)) throw err;
    }
  }
  throw untaggedFailure('RegisterDeploymentRequest');
}

/** `metadata`: a map of strings (checked, not kept: nothing reads deployment metadata yet). */
function stringMap(node: JsonNode): void {
  if (node.kind !== 'object' || node.entries.some(([, v]) => v.kind !== 'string')) throw new Mismatch();
}

/** `UpdateDeploymentRequest`, untagged as well; every field is optional, so `{}` fits. */
export function decodeUpdateDeployment(doc: JsonDocument): DeploymentPatch {
  const root = doc.root;
  try {
    if (root.kind !== 'object') throw new Mismatch();
    const patch: DeploymentPatch = {};
    const u = optional(member(root, 'uri'), uri);
    if (u !== undefined) patch.uri = u;
    const useHttp11 = optional(member(root, 'use_http_11'), bool);
    if (useHttp11 !== undefined) patch.useHttp11 = useHttp11;
    const headers = member(root, 'additional_headers');
    if (headers !== undefined) patch.additionalHeaders = headers.kind === 'null' ? null : headerMap(headers);
    const overwrite = member(root, 'overwrite');
    if (overwrite !== undefined) patch.overwrite = bool(overwrite);
    const dryRun = member(root, 'dry_run');
    if (dryRun !== undefined) patch.dryRun = bool(dryRun);
    return patch;
  } catch (err) {
    if (err instanceof Mismatch) throw untaggedFailure('UpdateDeploymentRequest');
    throw err;
  }
}

/** A serde error inside a plain struct: `<field>: <message> at line L column C`. */
function fieldError(doc: JsonDocument, field: string | undefined, message: string, at: number): AdminTextError {
  const p = doc.position(at);
  return new AdminTextError(
    422,
    `${DESERIALIZE}${field ? `${field}: ` : ''}${message} at line ${p.line} column ${p.column}`,
  );
}

const DURATION_FIELDS = {
  idempotency_retention: 'idempotencyRetention',
  journal_retention: 'journalRetention',
  workflow_completion_retention: 'workflowCompletionRetention',
  inactivity_timeout: 'inactivityTimeout',
  abort_timeout: 'abortTimeout',
  // Ours (issue 26): "0s" turns it off.
  state_ttl: 'stateTtl',
} as const satisfies Record<string, keyof ServicePatch>;

/** A duration field: friendly or ISO 8601 text, with serde's error at the value. */
function durationField(doc: JsonDocument, field: string, value: JsonNode): number {
  if (value.kind !== 'string')
    throw fieldError(doc, field, `invalid type: ${describeUnexpected(value)}, expected a string`, value.at);
  try {
    return parseDuration(value.value);
  } catch (err) {
    if (err instanceof DurationParseError) throw fieldError(doc, field, err.message, value.at);
    throw err;
  }
}

/**
 * `handlers` of PATCH /services/{name}, ours (issue 26): per-handler overrides, for now only
 * `{"<handler>": {"state_ttl": "1h"}}`; null removes the override, "0s" makes that handler's
 * writes never expire.
 */
function decodeHandlerOverrides(doc: JsonDocument, node: JsonNode): Record<string, number | null> {
  if (node.kind !== 'object')
    throw fieldError(
      doc,
      'handlers',
      `invalid type: ${describeUnexpected(node)}, expected a map of handler names`,
      node.at,
    );
  const out: Record<string, number | null> = {};
  for (const [name, value] of node.entries) {
    if (value.kind !== 'object')
      throw fieldError(
        doc,
        `handlers.${name}`,
        `invalid type: ${describeUnexpected(value)}, expected struct HandlerOverrides`,
        value.at,
      );
    const ttl = value.entries.find(([k]) => k === 'state_ttl')?.[1];
    if (ttl === undefined) continue;
    out[name] = ttl.kind === 'null' ? null : durationField(doc, `handlers.${name}.state_ttl`, ttl);
  }
  return out;
}

/**
 * `retry_policy` of PATCH /services/{name}, a redstate extension (Restate 1.7.12 sets a retry
 * policy only from the service's code): any of `initial_interval`, `max_interval` (durations),
 * `exponentiation_factor` (≥ 1), `max_attempts` (≥ 1, null for no limit), `on_max_attempts`
 * (`Pause` | `Kill`). Fields left out, or null but for `max_attempts`, stay as they are.
 */
function decodeRetryPolicy(doc: JsonDocument, node: JsonNode): Partial<RetryPolicy> {
  const field = (name: string) => `retry_policy.${name}`;
  if (node.kind !== 'object')
    throw fieldError(
      doc,
      'retry_policy',
      `invalid type: ${describeUnexpected(node)}, expected struct RetryPolicy`,
      node.at,
    );
  const policy: Partial<RetryPolicy> = {};
  for (const [key, value] of node.entries) {
    if (value.kind === 'null') {
      if (key === 'max_attempts') policy.maxAttempts = null;
      continue;
    }
    if (key === 'initial_interval' || key === 'max_interval') {
      policy[key === 'initial_interval' ? 'initialInterval' : 'maxInterval'] = durationField(doc, field(key), value);
    } else if (key === 'exponentiation_factor') {
      if (value.kind !== 'number' || value.value < 1)
        throw fieldError(
          doc,
          field(key),
          `invalid value: ${describeUnexpected(value)}, expected a number of at least 1`,
          value.at,
        );
      policy.exponentiationFactor = value.value;
    } else if (key === 'max_attempts') {
      if (value.kind !== 'number' || !value.integer || value.value < 1)
        throw fieldError(
          doc,
          field(key),
          `invalid value: ${describeUnexpected(value)}, expected a positive integer or null`,
          value.at,
        );
      policy.maxAttempts = value.value;
    } else if (key === 'on_max_attempts') {
      if (value.kind !== 'string' || (value.value !== 'Pause' && value.value !== 'Kill')) {
        throw fieldError(
          doc,
          field(key),
          `invalid value: ${describeUnexpected(value)}, expected \`Pause\` or \`Kill\``,
          value.at,
        );
      }
      policy.onMaxAttempts = value.value;
    }
  }
  return policy;
}

/** `ModifyServiceRequest` (§3.4): a struct, so errors name the field; unknown fields are ignored. */
export function decodeModifyService(doc: JsonDocument): ServicePatch {
  const root = doc.root;
  if (root.kind !== 'object') {
    throw fieldError(
      doc,
      undefined,
      `invalid type: ${describeUnexpected(root)}, expected struct ModifyServiceRequest`,
      root.at,
    );
  }
  const patch: ServicePatch = {};
  const seen = new Set<string>();
  for (const [key, value] of root.entries) {
    if (key !== 'public' && key !== 'retry_policy' && key !== 'handlers' && !(key in DURATION_FIELDS)) continue;
    if (seen.has(key)) throw fieldError(doc, undefined, `duplicate field \`${key}\``, value.at);
    seen.add(key);
    if (value.kind === 'null') continue;
    if (key === 'retry_policy') {
      patch.retryPolicy = decodeRetryPolicy(doc, value);
      continue;
    }
    if (key === 'handlers') {
      patch.handlerStateTtl = decodeHandlerOverrides(doc, value);
      continue;
    }
    if (key === 'public') {
      if (value.kind !== 'bool')
        throw fieldError(doc, key, `invalid type: ${describeUnexpected(value)}, expected a boolean`, value.at);
      patch.public = value.value;
      continue;
    }
    patch[DURATION_FIELDS[key as keyof typeof DURATION_FIELDS]] = durationField(doc, key, value);
  }
  return patch;
}

/** `{deployment}` path parameter: `Invalid URL: Cannot parse `deployment` with value `…`: bad format` (§3.3). */
export function deploymentParam(value: string): string {
  const check = checkDeploymentId(value);
  if (!check.ok)
    throw new AdminTextError(400, `Invalid URL: Cannot parse \`deployment\` with value \`${value}\`: ${check.reason}`);
  return value;
}

/** A boolean query parameter (`?force=true`); absent = false. */
export function boolQuery(query: Record<string, string | string[] | undefined>, name: string): boolean {
  const raw = query[name];
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  if (value === undefined) return false;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new AdminTextError(
    400,
    `Failed to deserialize query string: ${name}: provided string was not \`true\` or \`false\``,
  );
}
