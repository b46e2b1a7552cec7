/**
 * One virtual-object key (or workflow id): the exclusive lock and its inbox.
 *
 * An exclusive handler holds the lock from the moment it is granted until its invocation
 * completes, across suspensions and retries (service-protocol.md §13 rule 10); the next
 * exclusive invocation of the key gets it then, in arrival order. Shared handlers never come
 * here. Pure: granting is an effect (`grant`) the runtime performs after the commit.
 */
import { assign, setup } from 'xstate';
import { FlatStepper } from './stepper.js';

export interface ObjectKeyContext {
  service: string;
  key: string;
  /** The invocation holding the lock. */
  holder?: string;
  /** Invocations waiting for the lock, in arrival order. */
  inbox: string[];
}

export type ObjectKeyEvent = { type: 'acquire'; invocationId: string } | { type: 'release'; invocationId: string };

/** The one effect: the lock went to this invocation (or state mutation), which may run now. */
export type ObjectKeyEffect = { type: 'grant'; params: { invocationId: string } };

/** The effects among the actions a step collected, in order. */
export function objectKeyEffects(actions: ReadonlyArray<{ type: string; params?: unknown }>): ObjectKeyEffect[] {
  return actions
    .filter((a) => a.type === 'grant')
    .map((a) => ({ type: 'grant', params: a.params as ObjectKeyEffect['params'] }));
}

export const objectKeyMachine = setup({
  types: {
    context: {} as ObjectKeyContext,
    events: {} as ObjectKeyEvent,
    input: {} as { service: string; key: string },
  },
  actions: {
    grant: (_, _params: ObjectKeyEffect['params']) => {},
  },
  guards: {
    holderReleases: ({ context, event }) => event.type === 'release' && event.invocationId === context.holder,
    /** The holder releases and nobody waits: the key is free again. */
    lastHolderReleases: ({ context, event }) =>
      event.type === 'release' && event.invocationId === context.holder && context.inbox.length === 0,
  },
}).createMachine({
  id: 'objectKey',
  context: ({ input }) => ({ service: input.service, key: input.key, inbox: [] }),
  initial: 'free',
  states: {
    free: {
      on: {
        acquire: {
          target: 'locked',
          actions: [
            assign({ holder: ({ event }) => event.invocationId }),
            { type: 'grant', params: ({ event }) => ({ invocationId: event.invocationId }) },
          ],
        },
      },
    },
    locked: {
      on: {
        acquire: {
          actions: assign({
            inbox: ({ context, event }) =>
              context.inbox.includes(event.invocationId) || context.holder === event.invocationId
                ? context.inbox
                : [...context.inbox, event.invocationId],
          }),
        },
        release: [
          { guard: 'lastHolderReleases', target: 'free', actions: assign({ holder: undefined }) },
          {
            guard: 'holderReleases',
            actions: [
              assign(({ context }) => ({ holder: context.inbox[0], inbox: context.inbox.slice(1) })),
              { type: 'grant', params: ({ context }) => ({ invocationId: context.holder! }) },
            ],
          },
          // A waiting invocation that goes away (killed while queued) leaves the inbox.
          {
            actions: assign({ inbox: ({ context, event }) => context.inbox.filter((id) => id !== event.invocationId) }),
          },
        ],
      },
    },
  },
});

/** How the runtime steps this machine (./stepper.ts). */
export const objectKeySteps = new FlatStepper(objectKeyMachine, { service: 'sample', key: 'sample' });
