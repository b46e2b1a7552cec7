/**
 * Answering with an invocation's outcome (reference-behavior.md §2.4, §2.6): `output` peeks
 * (470 while it runs), `attach` waits. A result that was already stored carries
 * `idempotency-expires`, the end of its retention; one waited for does not.
 */
import type { Context } from 'koa';
import { IngressError } from './errors.js';
import type { CompletedInvocation } from '../model/persisted.js';
import type { IngressDeps } from './deps.js';
import { declaredOutput, writeCompletion } from './results.js';

/** The stored outcome, without waiting: 470 while the invocation runs. */
export async function answerOutput(ctx: Context, deps: IngressDeps, id: string): Promise<void> {
  const out = await deps.runtime.output(id);
  if (out.state === 'missing') throw new IngressError(404, 'invocation not found');
  if (out.state === 'pending') throw new IngressError(470, 'the invocation exists but has not completed yet');
  writeCompletion(ctx, declaredOutput(deps.registry, out.target), out, out.expiresAt);
}

/** A completed invocation, and the end of its retention when the answer says it (`idempotency-expires`). */
export interface Outcome {
  done: CompletedInvocation;
  expiresAt?: number;
}

/**
 * The outcome of an invocation, waiting for it if it still runs. A result that was already
 * stored carries `idempotency-expires`; one waited for does not (reference §2.6).
 */
export async function attachOutcome(deps: IngressDeps, id: string): Promise<Outcome> {
  const before = await deps.runtime.output(id);
  if (before.state === 'completed') return { done: before, expiresAt: before.expiresAt };
  const done = before.state === 'missing' ? undefined : await deps.runtime.attach(id);
  if (!done) throw new IngressError(404, 'not found', 'invocation', { invocationId: id });
  return { done };
}

export async function answerAttach(ctx: Context, deps: IngressDeps, id: string): Promise<void> {
  const { done, expiresAt } = await attachOutcome(deps, id);
  writeCompletion(ctx, declaredOutput(deps.registry, done.target), done, expiresAt);
}
