/**
 * The lifecycle of one attempt: one HTTP stream to the deployment (service-protocol.md §16b).
 *
 * Pure, like the invocation machine: the stream, the clock and the journal belong to the
 * invoker, which performs the effects below. The attempt never decides the invocation's fate:
 * a broken attempt is reported (`reportFailure`) and the invocation machine decides.
 *
 *   connecting ──start──▶ replaying ──replayed──▶ streaming ──inactive──▶ draining
 *                                    └─(request/response)─▶ awaitingResponse
 *   any of them ──ended|close──▶ done · ──broken──▶ failed · ──abort──▶ aborted
 */
import { setup } from 'xstate';
import { MemoStepper, Stepper } from './stepper.js';

export interface AttemptInput {
  /** Request/response endpoints answer only once the request is complete: no inactivity timeout (§15). */
  requestResponse: boolean;
  /** §11: after this long without a message in either direction, the request is closed so the SDK suspends. */
  inactivityTimeout: number;
  /** After closing the request, how long the SDK has to end the attempt. */
  abortTimeout: number;
}

export type AttemptEvent =
  /** The commit that starts this attempt is durable: Start may be written. */
  | { type: 'start' }
  /** Start and the journal were written. */
  | { type: 'replayed' }
  /** The SDK sent frames: it is alive. */
  | { type: 'frames' }
  /** This server wrote to the SDK (acks, notifications): the inactivity timeout counts from now. */
  | { type: 'answered' }
  | { type: 'inactive' }
  | { type: 'abortTimeout' }
  /** End, Suspension or Error arrived, or the SDK broke the protocol: the attempt is over. */
  | { type: 'ended' }
  /** The invocation left `running` (suspended, completed, paused, ...): release the stream. */
  | { type: 'close' }
  /** The transport failed: a stream error, a bad status, a bad frame. */
  | { type: 'broken'; message: string; code: number }
  /** Superseded by another attempt, or the server stops. */
  | { type: 'abort'; reason: string };

export interface Failure {
  message: string;
  code: number;
}

export type AttemptEffect =
  | { type: 'sendStart' }
  | { type: 'armInactivity'; params: { ms: number } }
  | { type: 'armAbort'; params: { ms: number } }
  | { type: 'clearTimers' }
  /** Half-close the request (the SDK then suspends, or answers a request/response call). */
  | { type: 'endRequest' }
  | { type: 'abortStream'; params: { reason: string } }
  /** Tell the invocation that this attempt failed. */
  | { type: 'reportFailure'; params: Failure };

const ABORT_TIMEOUT_MESSAGE = 'the deployment did not end the attempt within the abort timeout';

export const attemptMachine = setup({
  types: {
    context: {} as AttemptInput,
    events: {} as AttemptEvent,
    input: {} as AttemptInput,
  },
  guards: {
    requestResponse: ({ context }) => context.requestResponse,
  },
  actions: {
    // The shapes are AttemptEffect's.
    sendStart: () => {},
    armInactivity: (_, _params: { ms: number }) => {},
    armAbort: (_, _params: { ms: number }) => {},
    clearTimers: () => {},
    endRequest: () => {},
    abortStream: (_, _params: { reason: string }) => {},
    reportFailure: (_, _params: Failure) => {},
  },
}).createMachine({
  id: 'attempt',
  context: ({ input }) => input,
  initial: 'connecting',
  on: {
    ended: '.done',
    close: '.done',
    broken: '.failed',
    abort: '.aborted',
  },
  states: {
    /** The stream may already be open (headers only); nothing of the invocation is sent yet. */
    connecting: {
      on: { start: 'replaying' },
    },
    replaying: {
      entry: 'sendStart',
      on: {
        replayed: [{ guard: 'requestResponse', target: 'awaitingResponse' }, { target: 'streaming' }],
      },
    },
    streaming: {
      entry: { type: 'armInactivity', params: ({ context }) => ({ ms: context.inactivityTimeout }) },
      on: {
        frames: { target: 'streaming', reenter: true },
        answered: { target: 'streaming', reenter: true },
        inactive: 'draining',
      },
    },
    /** The request is closed: the SDK should suspend now; if it does not within the abort timeout, the attempt failed. */
    draining: {
      entry: ['endRequest', { type: 'armAbort', params: ({ context }) => ({ ms: context.abortTimeout }) }],
      on: {
        abortTimeout: 'failedToEnd',
      },
    },
    awaitingResponse: {
      entry: 'endRequest',
    },
    done: {
      type: 'final',
      entry: ['clearTimers', 'endRequest'],
    },
    failed: {
      type: 'final',
      entry: [
        'clearTimers',
        {
          type: 'abortStream',
          params: ({ event }) => ({ reason: event.type === 'broken' ? event.message : 'attempt failed' }),
        },
        {
          type: 'reportFailure',
          params: ({ event }) =>
            event.type === 'broken'
              ? { message: event.message, code: event.code }
              : { message: 'attempt failed', code: 500 },
        },
      ],
    },
    failedToEnd: {
      type: 'final',
      entry: [
        'clearTimers',
        { type: 'abortStream', params: { reason: ABORT_TIMEOUT_MESSAGE } },
        { type: 'reportFailure', params: { message: ABORT_TIMEOUT_MESSAGE, code: 500 } },
      ],
    },
    aborted: {
      type: 'final',
      entry: [
        'clearTimers',
        { type: 'abortStream', params: ({ event }) => ({ reason: event.type === 'abort' ? event.reason : 'aborted' }) },
      ],
    },
  },
});

const EFFECT_TYPES: ReadonlySet<string> = new Set<AttemptEffect['type']>([
  'sendStart',
  'armInactivity',
  'armAbort',
  'clearTimers',
  'endRequest',
  'abortStream',
  'reportFailure',
]);

/** The effects among the actions a step collected, in order. */
export function attemptEffects(actions: ReadonlyArray<{ type: string; params?: unknown }>): AttemptEffect[] {
  return actions
    .filter((a) => EFFECT_TYPES.has(a.type))
    .map((a) => ({ type: a.type, ...(a.params !== undefined ? { params: a.params } : {}) }) as AttemptEffect);
}

/** Whether Start and the journal were written and the attempt still runs: notifications may be sent. */
export function isStreaming(value: unknown): boolean {
  return value === 'streaming' || value === 'draining' || value === 'awaitingResponse';
}

const inputKey = ({ requestResponse, inactivityTimeout, abortTimeout }: AttemptInput): string =>
  `${requestResponse ? 1 : 0}:${inactivityTimeout}:${abortTimeout}`;

/**
 * Steps of attempts, remembered: one input (the attempt's whole, fixed context) always starts
 * in the same snapshot, and an event with no payload leads from one state of one context
 * always to the same snapshot and actions.
 */
export const attemptSteps = new MemoStepper(
  new Stepper(attemptMachine, { requestResponse: false, inactivityTimeout: 0, abortTimeout: 0 }),
  {
    initial: inputKey,
    next: (snapshot, event) =>
      Object.keys(event).length === 1
        ? `${inputKey(snapshot.context)}:${String(snapshot.value)}:${event.type}`
        : undefined,
  },
);
