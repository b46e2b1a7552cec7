/**
 * Messages that one partition's commit leaves for an invocation (possibly of another
 * partition), as they are stored in the outbox, and who they concern.
 */
import type { Failure, Target } from '../../machines/invocation.js';
import type { Header } from '../protocol/messages.js';

/** Who waits for an invocation's result: a call command of another invocation. */
export interface Caller {
  invocationId: string;
  completionId: number;
}

/** The invocation whose handler called or sent another one: its lineage. */
export interface Parent {
  invocationId: string;
  target: Target;
}

/**
 * Messages that one partition's commit records for another invocation (possibly in another
 * partition). They are delivered after the commit and removed once delivered; delivery is
 * idempotent, so recovery can re-drive an outbox after a crash (design.md, "Scaling past one
 * machine").
 */
export type OutboxBody =
  | {
      kind: 'invoke';
      invocationId: string;
      target: Target;
      /** base64 */
      input: string;
      headers: Header[];
      caller?: Caller;
      parent?: Parent;
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
      /** One of the two: a signal index (CANCEL, awakeables), or a named signal's name. */
      signalId?: number;
      signalName?: string;
      value?: string;
      failure?: Failure;
    };
