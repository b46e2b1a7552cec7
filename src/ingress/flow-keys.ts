/**
 * The scope, the limit key and the priority of an ingress request (reference-behavior.md §2.9;
 * the priority is ours, `x-restate-priority`): the scope is
 * one path segment, the limit key comes from the `x-restate-limit-key` header or the
 * `?limit-key=` parameter (the header wins; empty counts as none). Both are "restricted
 * values": 1–36 bytes of [a-zA-Z0-9_.-], checked in the reference's order (empty, length,
 * characters), with its texts.
 */
import type { Context } from 'koa';
import { IngressError } from './errors.js';
import { PRIORITY } from '../../machines/limiter.js';

const MAX_LEN = 36;
const ALLOWED = /^[a-zA-Z0-9_.-]*$/;
const MAX_LIMIT_KEY_LEVELS = 2;

/** What is wrong with a restricted value, in the reference's words; undefined when it is fine. */
function restrictedValueProblem(value: string): string | undefined {
  if (value === '') return 'value cannot be empty';
  const bytes = Buffer.byteLength(value);
  if (bytes > MAX_LEN) return `value too long: ${bytes} bytes (max ${MAX_LEN})`;
  if (!ALLOWED.test(value)) return 'value contains characters outside the allowed set [a-zA-Z0-9_.-]';
  return undefined;
}

export function checkScope(scope: string): string {
  const problem = restrictedValueProblem(scope);
  if (problem) throw new IngressError(400, `bad scope value: ${problem}`);
  return scope;
}

/** The request's raw limit key, or undefined when none (or an empty one) is given. */
export function rawLimitKey(ctx: Context): string | undefined {
  const header = ctx.get('x-restate-limit-key');
  if (header !== '') return header;
  const query = ctx.query['limit-key'];
  return typeof query === 'string' && query !== '' ? query : undefined;
}

/** One or two `/`-separated levels; a trailing `/` is dropped (`a/` is `a`). */
export function checkLimitKey(raw: string): string {
  const levels = raw.split('/');
  if (levels.length > 1 && levels[levels.length - 1] === '') levels.pop();
  if (levels.length > MAX_LIMIT_KEY_LEVELS) {
    throw new IngressError(
      400,
      `invalid limit-key: too many path components in the given limit-key (max ${MAX_LIMIT_KEY_LEVELS})`,
    );
  }
  for (const level of levels) {
    const problem = restrictedValueProblem(level);
    if (problem) throw new IngressError(400, `invalid limit-key: invalid limit-key component: ${problem}`);
  }
  return levels.join('/');
}

/** `x-restate-priority`: a whole number from `PRIORITY.first` (starts first) to `PRIORITY.last`. */
export function checkPriority(raw: string): number {
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= PRIORITY.first && n <= PRIORITY.last)) {
    throw new IngressError(
      400,
      `bad x-restate-priority header, must be a whole number from ${PRIORITY.first} (starts first) to ${PRIORITY.last} (starts last), default ${PRIORITY.default}: '${raw}'`,
    );
  }
  return n;
}
