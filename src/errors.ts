/**
 * Errors that reach a client, and the codes that are part of the wire contract.
 *
 * Routes throw these; the ingress and admin apps each have one error funnel that turns them
 * into Restate's bodies (reference-behavior.md §1.1, §1.2). No route builds an error body.
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

export type ErrorSource = 'ingress' | 'invocation';

/**
 * An ingress error: `{"code","message",["metadata"],["stacktrace"],"source"}` plus
 * `x-restate-error-source`, and `x-restate-id` when the error belongs to an invocation.
 */
export class IngressError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly source: ErrorSource = 'ingress',
    readonly details: {
      invocationId?: string;
      metadata?: Record<string, string>;
      stacktrace?: string;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = 'IngressError';
  }
}

/** An admin handler error: JSON `{"message","restate_code"}`. */
export class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly restateCode: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AdminError';
  }
}

/** An admin framework (extractor) error: `text/plain; charset=utf-8` body, as axum answers. */
export class AdminTextError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'AdminTextError';
  }
}

/** An admin error with an empty body (unknown route 404, 405 with `allow`, 501). */
export class AdminEmptyError extends Error {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string> = {},
  ) {
    super(`status ${status}`);
    this.name = 'AdminEmptyError';
  }
}

/** `/query` errors: JSON `{"message"}` without `restate_code`. */
export class QueryError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'QueryError';
  }
}
