/**
 * The endpoint manifest an SDK answers to `GET /discover` (service-protocol.md §3), and its
 * validation. Durations are integer milliseconds; only starred fields of §3 are required.
 */

export type ProtocolMode = 'BIDI_STREAM' | 'REQUEST_RESPONSE';
export type ManifestServiceType = 'SERVICE' | 'VIRTUAL_OBJECT' | 'WORKFLOW';
export type ManifestHandlerType = 'EXCLUSIVE' | 'SHARED' | 'WORKFLOW';
export type ManifestOnMaxAttempts = 'PAUSE' | 'KILL';

/** Fields shared by services and handlers (v3+ for the timeouts, v4+ for the retry policy). */
export interface ManifestOptions {
  documentation?: string;
  metadata?: Record<string, string>;
  inactivityTimeout?: number;
  abortTimeout?: number;
  journalRetention?: number;
  idempotencyRetention?: number;
  enableLazyState?: boolean;
  ingressPrivate?: boolean;
  retryPolicyInitialInterval?: number;
  retryPolicyMaxInterval?: number;
  retryPolicyMaxAttempts?: number;
  retryPolicyExponentiationFactor?: number;
  retryPolicyOnMaxAttempts?: ManifestOnMaxAttempts;
}

export interface ManifestHandler extends ManifestOptions {
  name: string;
  ty?: ManifestHandlerType;
  /** Unset: any input (registry/from-manifest.ts). */
  input?: { required?: boolean; contentType?: string; jsonSchema?: unknown };
  output?: { contentType?: string; setContentTypeIfEmpty?: boolean; jsonSchema?: unknown };
  /** Only on `WORKFLOW` handlers. */
  workflowCompletionRetention?: number;
}

export interface ManifestService extends ManifestOptions {
  name: string;
  ty: ManifestServiceType;
  handlers: ManifestHandler[];
}

export interface EndpointManifest {
  protocolMode: ProtocolMode;
  minProtocolVersion: number;
  maxProtocolVersion: number;
  lambdaCompression?: 'zstd';
  services: ManifestService[];
}

/** Invocation protocol versions this server runs (service-protocol.md §1). */
export const SUPPORTED_PROTOCOL_VERSIONS = { min: 5, max: 7 } as const;

/** Manifest versions we ask for and accept (`application/vnd.restate.endpointmanifest.vN+json`). */
export const SUPPORTED_MANIFEST_VERSIONS = [1, 2, 3, 4] as const;

export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

const SERVICE_NAME = /^([a-zA-Z]|_[a-zA-Z0-9])[a-zA-Z0-9._-]*$/;
const HANDLER_NAME = /^([a-zA-Z]|_[a-zA-Z0-9])[a-zA-Z0-9_]*$/;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Field readers: each checks the type and throws a ManifestError naming the field's path. */
class Reader {
  constructor(
    private readonly obj: Json,
    private readonly path: string,
  ) {}

  private fail(field: string, expected: string): never {
    throw new ManifestError(`${this.path}.${field}: expected ${expected}, got ${JSON.stringify(this.obj[field])}`);
  }
  string(field: string): string | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    return typeof v === 'string' ? v : this.fail(field, 'a string');
  }
  bool(field: string): boolean | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    return typeof v === 'boolean' ? v : this.fail(field, 'a boolean');
  }
  /** Non-negative integer (durations in ms, attempts, versions). */
  uint(field: string): number | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : this.fail(field, 'a non-negative integer');
  }
  number(field: string): number | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    return typeof v === 'number' && Number.isFinite(v) ? v : this.fail(field, 'a number');
  }
  oneOf<T extends string>(field: string, values: readonly T[]): T | undefined {
    const v = this.string(field);
    if (v === undefined) return undefined;
    return (values as readonly string[]).includes(v) ? (v as T) : this.fail(field, `one of ${values.join(', ')}`);
  }
  stringMap(field: string): Record<string, string> | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    if (!isObject(v) || Object.values(v).some((x) => typeof x !== 'string'))
      return this.fail(field, 'a map of strings');
    return { ...(v as Record<string, string>) };
  }
  object(field: string): Reader | undefined {
    const v = this.obj[field];
    if (v === undefined || v === null) return undefined;
    return isObject(v) ? new Reader(v, `${this.path}.${field}`) : this.fail(field, 'an object');
  }
  raw(field: string): unknown {
    return this.obj[field];
  }
}

function readOptions(r: Reader): ManifestOptions {
  const out: ManifestOptions = {
    documentation: r.string('documentation'),
    metadata: r.stringMap('metadata'),
    inactivityTimeout: r.uint('inactivityTimeout'),
    abortTimeout: r.uint('abortTimeout'),
    journalRetention: r.uint('journalRetention'),
    idempotencyRetention: r.uint('idempotencyRetention'),
    enableLazyState: r.bool('enableLazyState'),
    ingressPrivate: r.bool('ingressPrivate'),
    retryPolicyInitialInterval: r.uint('retryPolicyInitialInterval'),
    retryPolicyMaxInterval: r.uint('retryPolicyMaxInterval'),
    retryPolicyMaxAttempts: r.uint('retryPolicyMaxAttempts'),
    retryPolicyExponentiationFactor: r.number('retryPolicyExponentiationFactor'),
    retryPolicyOnMaxAttempts: r.oneOf('retryPolicyOnMaxAttempts', ['PAUSE', 'KILL'] as const),
  };
  return dropUndefined(out);
}

function dropUndefined<T extends object>(obj: T): T {
  for (const k of Object.keys(obj) as Array<keyof T>) if (obj[k] === undefined) delete obj[k];
  return obj;
}

function readHandler(raw: unknown, path: string, serviceTy: ManifestServiceType): ManifestHandler {
  if (!isObject(raw)) throw new ManifestError(`${path}: expected an object`);
  const r = new Reader(raw, path);
  const name = r.string('name');
  if (name === undefined) throw new ManifestError(`${path}.name: missing`);
  if (!HANDLER_NAME.test(name))
    throw new ManifestError(`${path}.name: '${name}' does not match ${HANDLER_NAME.source}`);
  const ty = r.oneOf('ty', ['EXCLUSIVE', 'SHARED', 'WORKFLOW'] as const);
  if (ty === 'WORKFLOW' && serviceTy !== 'WORKFLOW') {
    throw new ManifestError(`${path}.ty: handler '${name}' has type WORKFLOW but its service is not a workflow`);
  }
  if (ty === 'EXCLUSIVE' && serviceTy === 'WORKFLOW') {
    throw new ManifestError(`${path}.ty: handler '${name}' of a workflow cannot be EXCLUSIVE`);
  }
  const input = r.object('input');
  const output = r.object('output');
  return dropUndefined({
    name,
    ty,
    input:
      input &&
      dropUndefined({
        required: input.bool('required'),
        contentType: input.string('contentType'),
        jsonSchema: input.raw('jsonSchema'),
      }),
    output:
      output &&
      dropUndefined({
        contentType: output.string('contentType'),
        setContentTypeIfEmpty: output.bool('setContentTypeIfEmpty'),
        jsonSchema: output.raw('jsonSchema'),
      }),
    workflowCompletionRetention: r.uint('workflowCompletionRetention'),
    ...readOptions(r),
  });
}

function readService(raw: unknown, path: string): ManifestService {
  if (!isObject(raw)) throw new ManifestError(`${path}: expected an object`);
  const r = new Reader(raw, path);
  const name = r.string('name');
  if (name === undefined) throw new ManifestError(`${path}.name: missing`);
  if (!SERVICE_NAME.test(name))
    throw new ManifestError(`${path}.name: '${name}' does not match ${SERVICE_NAME.source}`);
  const ty = r.oneOf('ty', ['SERVICE', 'VIRTUAL_OBJECT', 'WORKFLOW'] as const);
  if (ty === undefined) throw new ManifestError(`${path}.ty: missing`);
  const handlersRaw = raw['handlers'];
  if (!Array.isArray(handlersRaw)) throw new ManifestError(`${path}.handlers: expected an array`);
  const handlers = handlersRaw.map((h, i) => readHandler(h, `${path}.handlers[${i}]`, ty));
  const seen = new Set<string>();
  for (const h of handlers) {
    if (seen.has(h.name)) throw new ManifestError(`${path}: handler '${h.name}' is defined twice`);
    seen.add(h.name);
  }
  if (ty === 'WORKFLOW' && handlers.filter((h) => h.ty === 'WORKFLOW').length !== 1) {
    throw new ManifestError(`${path}: workflow '${name}' must have exactly one handler of type WORKFLOW`);
  }
  return { name, ty, handlers, ...readOptions(r) };
}

/** Checks a parsed manifest and returns it typed; throws ManifestError with the offending path. */
export function validateManifest(raw: unknown): EndpointManifest {
  if (!isObject(raw)) throw new ManifestError('the manifest is not a JSON object');
  const r = new Reader(raw, 'manifest');
  // restate-server refuses a manifest without protocolMode (service-protocol.md §3).
  const protocolMode = r.oneOf('protocolMode', ['BIDI_STREAM', 'REQUEST_RESPONSE'] as const);
  if (protocolMode === undefined) throw new ManifestError('manifest.protocolMode: missing');
  const min = r.uint('minProtocolVersion');
  const max = r.uint('maxProtocolVersion');
  if (min === undefined || min < 1) throw new ManifestError('manifest.minProtocolVersion: missing or below 1');
  if (max === undefined || max < 1) throw new ManifestError('manifest.maxProtocolVersion: missing or below 1');
  if (min > max)
    throw new ManifestError(`manifest: minProtocolVersion ${min} is greater than maxProtocolVersion ${max}`);
  const { min: ourMin, max: ourMax } = SUPPORTED_PROTOCOL_VERSIONS;
  if (max < ourMin || min > ourMax) {
    throw new ManifestError(
      `the deployment supports the service protocol versions [${min}, ${max}], but this server supports only [${ourMin}, ${ourMax}]`,
    );
  }
  const servicesRaw = raw['services'];
  if (!Array.isArray(servicesRaw)) throw new ManifestError('manifest.services: expected an array');
  const services = servicesRaw.map((s, i) => readService(s, `manifest.services[${i}]`));
  const seen = new Set<string>();
  for (const s of services) {
    if (seen.has(s.name)) throw new ManifestError(`manifest: service '${s.name}' is defined twice`);
    seen.add(s.name);
  }
  const lambdaCompression = r.oneOf('lambdaCompression', ['zstd'] as const);
  return dropUndefined({ protocolMode, minProtocolVersion: min, maxProtocolVersion: max, lambdaCompression, services });
}
