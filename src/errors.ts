/**
 * Errors that reach a client, and the codes that are part of the wire contract.
 *
 * The registry, the protocol layer and the runtime throw domain errors (`NotFound`,
 * `Conflict`, ...) whose messages are the reference's texts; the HTTP layers throw their own
 * (`IngressError`, `AdminError`, ...). The ingress and admin apps each have one error funnel
 * that turns both into Restate's bodies and statuses (reference-behavior.md §1.1, §1.2). No
 * route builds an error body.
 */

/** `restate_code` values of admin errors (reference-behavior.md §3.9). */
export const MetaCode = {
  discoveryFailed: 'META0003',
  incompatibleRevision: 'META0006',
  invalidSubscription: 'META0009',
  http11Only: 'META0014',
} as const;

/** Error codes recorded for invocation failures (sys_invocation.last_failure_error_code). */
export const RuntimeCode = {
  retryableServiceError: 'RT0007',
} as const;

/** Failure codes of the service protocol (service-protocol.md §12): the attempt failed because of the exchange itself. */
export const ProtocolCode = {
  /** The SDK replayed a journal that does not match what is stored. */
  journalMismatch: 570,
  /** A message that is not allowed here: unknown type, bad frame, End without Output, a forbidden command. */
  protocolViolation: 571,
} as const;

/** A failure in domain terms; `code` is a Restate code (`META0003`, ...) the admin body carries as `restate_code`. */
export class DomainError extends Error {
  constructor(
    message: string,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The thing named does not exist (404). */
export class NotFound extends DomainError {}
/** The request contradicts the current state: already exists, already completed, a failed precondition (409). */
export class Conflict extends DomainError {}
/** The request itself is wrong (400). */
export class InvalidRequest extends DomainError {}
/** Not done by this server; the reference answers with an empty 501 (e.g. removing a deployment without `force`). */
export class NotImplemented extends DomainError {}
/** The data the operation needs is gone for good (410). */
export class Gone extends DomainError {}
/** Understood, but this kind of target cannot do it (422). */
export class Unprocessable extends DomainError {}
/** A deployment could not be reached or described itself badly (500, META0003). */
export class DiscoveryFailed extends DomainError {}
/** Something the request needs cannot be reached now; retry later (503). Reported once where it happens, not per request. */
export class Unavailable extends DomainError {}

/** Refused for now, nothing done: a bounded queue is full (429, with `Retry-After` in seconds). */
export class TooManyRequests extends DomainError {
  readonly retryAfterSeconds = 1;
}

/** A node was asked to do what another node owns now (src/cluster/): ask the owner instead. */
export class Misdirected extends Unavailable {
  constructor(readonly partition: number) {
    super(`partition ${partition} is not owned by this node`);
  }
}

/** The HTTP status of a domain error, the same for both funnels. */
export function statusOf(err: DomainError): number {
  if (err instanceof NotFound) return 404;
  if (err instanceof Conflict) return 409;
  if (err instanceof InvalidRequest) return 400;
  if (err instanceof NotImplemented) return 501;
  if (err instanceof Gone) return 410;
  if (err instanceof Unprocessable) return 422;
  if (err instanceof TooManyRequests) return 429;
  if (err instanceof Unavailable) return 503;
  return 500;
}
