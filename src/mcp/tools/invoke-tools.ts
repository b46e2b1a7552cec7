/**
 * Calling and sending to handlers, and completing awakeables: the ingress's own code paths
 * (src/ingress/invoke-routes.ts, awakeable-routes.ts), so every rule and error text of the
 * ingress holds here too.
 */
import * as z from 'zod';
import { callOutcome, sendAnswer, startInvocation, type InvocationAsk } from '../../ingress/invoke-routes.js';
import { completeAwakeable } from '../../ingress/awakeable-routes.js';
import type { Outcome } from '../../ingress/answers.js';
import { targetString } from '../../query/invocation-rows.js';
import type { McpDeps } from '../deps.js';
import { ADDITIVE, answer, tool, type Tool } from '../tool.js';
import { bodyOf, shownValue } from '../values.js';

const target = {
  service: z.string().describe('Service, virtual object or workflow name'),
  handler: z.string(),
  key: z
    .string()
    .optional()
    .describe(
      'The object key or workflow id: required for virtual objects and workflows, not allowed for plain services',
    ),
  input: z
    .unknown()
    .optional()
    .describe("The handler's input, as JSON (sent as its JSON text). Leave out for handlers without input"),
  content_type: z
    .string()
    .optional()
    .describe('Send `input` (then a string) as it is, with this content type, instead of as JSON'),
  idempotency_key: z
    .string()
    .optional()
    .describe('Requests with the same key (per target) run once; a repeat gets the first one’s result'),
  scope: z
    .string()
    .optional()
    .describe('The flow-control scope (needs vqueues enabled): 1–36 characters of [a-zA-Z0-9_.-]'),
  limit_key: z
    .string()
    .optional()
    .describe('What limit rules count by within the scope: one or two `/`-separated levels'),
  priority: z
    .number()
    .int()
    .optional()
    .describe('Within the scope, which waiting invocations start first: 1 (first) to 9 (last), default 5'),
};

type TargetArgs = z.infer<z.ZodObject<typeof target>>;

const awakeableId = z.string().describe('The awakeable id a handler got from ctx.awakeable() (sign_1…)');

const WRONG_KEY = 'a key is required for virtual objects and workflows, and not allowed for plain services';

/** When a send starts: after `delay`, or at `at`. */
interface SendTime {
  delay?: string | undefined;
  at?: string | undefined;
}

function ask(args: TargetArgs, mode: 'call' | 'send', { delay, at }: SendTime = {}): InvocationAsk {
  const { body, contentType } = bodyOf(args.input, args.content_type);
  return {
    mode,
    service: args.service,
    handler: args.handler,
    ...(args.key !== undefined ? { key: args.key } : {}),
    ...(args.scope !== undefined ? { scope: args.scope } : {}),
    ...(args.limit_key !== undefined ? { limitKey: args.limit_key } : {}),
    ...(args.priority !== undefined ? { priority: String(args.priority) } : {}),
    ...(delay !== undefined ? { delay } : {}),
    ...(at !== undefined ? { at } : {}),
    ...(args.idempotency_key !== undefined ? { idempotencyKey: args.idempotency_key } : {}),
    body: () => Promise.resolve(body),
    ...(contentType !== undefined ? { contentType } : {}),
    headers: contentType !== undefined ? [{ key: 'content-type', value: contentType }] : [],
    badShape: WRONG_KEY,
  };
}

/** The outcome, or undefined once `ms` passed or the client gave up first. */
function within<T>(work: Promise<T>, ms: number, signal: AbortSignal): Promise<T | undefined> {
  // The wait goes on in the runtime regardless; only this answer stops waiting for it.
  work.catch(() => undefined);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    const stop = () => {
      clearTimeout(timer);
      resolve(undefined);
    };
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    });
  });
}

function outcomeView({ done }: Outcome) {
  const c = done.completion;
  if ('failure' in c) {
    const { code, message, metadata } = c.failure;
    return {
      invocation_id: done.id,
      target: targetString(done.target),
      outcome: 'failure' as const,
      failure: {
        code,
        message,
        ...(metadata && metadata.length > 0
          ? { metadata: Object.fromEntries(metadata.map((m) => [m.key, m.value])) }
          : {}),
      },
    };
  }
  const shown = shownValue(Buffer.from(c.ok, 'base64'));
  return {
    invocation_id: done.id,
    target: targetString(done.target),
    outcome: 'success' as const,
    output_encoding: shown.encoding,
    ...('value' in shown ? { output: shown.value } : {}),
  };
}

export function invokeTools(deps: McpDeps): Tool[] {
  return [
    tool('call', {
      title: 'Call a handler',
      description:
        'Invokes a handler and waits for its result (as POST /restate/call/...). Answers the invocation id and its output or failure; if it has not completed within `wait_seconds`, answers the id and that it still runs (follow it with describe_invocation).',
      input: {
        ...target,
        wait_seconds: z.number().int().min(0).max(600).default(30).describe('How long to wait for the result'),
      },
      annotations: { ...ADDITIVE, openWorldHint: true },
      async run(args, signal) {
        const started = await startInvocation(deps, ask(args, 'call'));
        const outcome = await within(callOutcome(deps, started), args.wait_seconds * 1000, signal);
        if (!outcome) {
          return answer(`${started.invocationId} is still running after ${args.wait_seconds} s.`, {
            invocation_id: started.invocationId,
            outcome: 'running',
          });
        }
        const view = outcomeView(outcome);
        const summary =
          view.outcome === 'success'
            ? `${view.invocation_id} (${view.target}) succeeded.`
            : `${view.invocation_id} (${view.target}) failed with ${view.failure.code}: ${view.failure.message}`;
        return answer(summary, view);
      },
    }),
    tool('send', {
      title: 'Send to a handler',
      description:
        'Starts a handler without waiting for it (as POST /restate/send/...), now, after `delay` or at `at`; answers the invocation id.',
      input: {
        ...target,
        delay: z
          .string()
          .optional()
          .describe('Start after this long: ISO 8601 (PT10S) or the friendly form (10s, 5m, 1h 30m)'),
        at: z
          .string()
          .optional()
          .describe('Start at this time instead (RFC 3339, e.g. 2026-12-01T09:30:00Z); a time past starts now'),
      },
      annotations: { ...ADDITIVE, openWorldHint: true },
      async run(args) {
        const started = await startInvocation(deps, ask(args, 'send', { delay: args.delay, at: args.at }));
        const sent = sendAnswer(started);
        const view = {
          invocation_id: sent.invocationId,
          status: sent.status,
          ...(sent.executionTime !== undefined ? { execution_time: sent.executionTime } : {}),
        };
        const when = view.execution_time !== undefined ? `, to start at ${view.execution_time}` : '';
        return answer(`${view.invocation_id}: ${view.status}${when}.`, view);
      },
    }),
    tool('resolve_awakeable', {
      title: 'Resolve an awakeable',
      description:
        'Completes an awakeable a handler waits for with a value (JSON), once it is stored in that invocation’s journal.',
      input: { awakeable_id: awakeableId, value: z.unknown().optional().describe('The value, as JSON') },
      annotations: ADDITIVE,
      async run({ awakeable_id, value }) {
        const { body } = bodyOf(value, undefined);
        await completeAwakeable(deps, awakeable_id, 'resolve', () => Promise.resolve(body));
        return answer(`Resolved ${awakeable_id}.`, { awakeable_id, resolved: true });
      },
    }),
    tool('reject_awakeable', {
      title: 'Reject an awakeable',
      description:
        'Fails an awakeable a handler waits for: the handler sees a terminal error with this reason (code 500).',
      input: { awakeable_id: awakeableId, reason: z.string() },
      annotations: ADDITIVE,
      async run({ awakeable_id, reason }) {
        await completeAwakeable(deps, awakeable_id, 'reject', () => Promise.resolve(Buffer.from(reason, 'utf8')));
        return answer(`Rejected ${awakeable_id}.`, { awakeable_id, rejected: true });
      },
    }),
  ];
}
