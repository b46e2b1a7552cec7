/**
 * What the runtime tells operators about its invocations, after each commit: the
 * `redstate_invocations{status}` gauge, and one log line for each failure that changes an
 * invocation's course (a retry planned, a pause, a kill or a terminal failure). A successful
 * invocation logs nothing at info.
 */
import { statusOf } from '../../../machines/invocation.js';
import { invocationFields, LogField, type Logger } from '../../telemetry/log.js';
import { invocationStatusChanged, type InvocationStatus } from '../../telemetry/metrics.js';
import type { Committed, InvocationActor } from '../kernel/invocation-actor.js';

const status = (state: string) => statusOf(state) as InvocationStatus;

export function observeCommit(log: Logger, actor: InvocationActor, done: Committed): void {
  invocationStatusChanged(done.from === undefined ? undefined : status(done.from), status(done.to));
  if (done.from === done.to) return;
  const c = actor.context;
  // The failure that caused this transition, not an older one kept in the context.
  const failure = c.lastFailure !== undefined && c.lastFailure.at === c.modifiedAt ? c.lastFailure : undefined;
  if (!failure && !(done.to === 'completed' && c.completion && 'failure' in c.completion)) return;
  const fields = {
    ...invocationFields(actor.id, c.target),
    ...(failure
      ? {
          [LogField.errorCode]: failure.errorCode ?? String(failure.code),
          [LogField.errorMessage]: failure.message,
          retry_count: c.retryCount,
        }
      : {}),
  };
  if (done.to === 'backingOff')
    log.warn(
      { ...fields, retry_in_ms: Math.max(0, (c.nextRetryAt ?? c.modifiedAt) - c.modifiedAt) },
      'attempt failed, retrying',
    );
  else if (done.to === 'paused') log.warn(fields, 'attempt failed, invocation paused');
  else if (failure) log.warn(fields, 'attempt failed, invocation failed for good');
  else
    log.info(
      {
        ...fields,
        [LogField.errorMessage]: c.completion && 'failure' in c.completion ? c.completion.failure.message : undefined,
      },
      'invocation ended with a failure',
    );
}
