/** The `/query` error envelope, which the admin funnel answers with (src/admin/funnel.ts). */
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
