/**
 * The admin API's own errors, in the three shapes its funnel (./funnel.ts) answers with
 * (reference-behavior.md §1.2): JSON `{"message","restate_code"}`, axum's plain-text extractor
 * errors, and empty bodies.
 */
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
