/**
 * Messages that one partition's commit records for another invocation (possibly in another
 * partition). They are delivered after the commit and removed once delivered; delivery is
 * idempotent, so the supervisor can re-drive an outbox after a crash (design.md, "Scaling
 * past one machine").
 */
import type { Failure, Target } from '../../machines/invocation.js';
import type { Header } from '../protocol/messages.js';

export type OutboxBody =
  | {
      kind: 'invoke';
      invocationId: string;
      target: Target;
      /** base64 */
      input: string;
      headers: Header[];
      caller?: { invocationId: string; completionId: number };
      executeAt?: number;
      idempotencyKey?: string;
    }
  | {
      /** A result for a waiting command (a call's result, a durable promise), for its journal. */
      kind: 'complete';
      /** The notification to store; a call's result (CallCompletion) when absent. */
      notificationType?: number;
      invocationId: string;
      completionId: number;
      value?: string;
      failure?: Failure;
    }
  | {
      kind: 'signal';
      invocationId: string;
      signalId: number;
      value?: string;
      failure?: Failure;
    };
