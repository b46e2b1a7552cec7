/**
 * What an operator can do to one invocation (the admin API's PATCH /invocations/{id}/…,
 * reference-behavior.md §3.5). Each action is a machine event or a journal entry committed
 * on the invocation's queue, like everything else that changes an invocation.
 */
import { encodeNotification, MessageType } from '../protocol/messages.js';
import { timerKey } from './timer-keys.js';
import type { Runtime } from './runtime.js';

/** How an operation ended; the admin API maps each outcome to the reference's answer. */
export type Outcome = 'done' | 'noop' | 'notFound' | 'completed' | 'notRunning' | 'notCompleted';

const CANCEL_SIGNAL = 1;

/** Live (non-completed) invocations go through `live`; others answer from the store. */
async function withInvocation(rt: Runtime, id: string, live: (host: NonNullable<Awaited<ReturnType<Runtime['host']>>>) => Promise<Outcome>): Promise<Outcome> {
  const host = await rt.host(id);
  if (host) return host.run(() => (host.status === 'completed' ? Promise.resolve('completed' as const) : live(host)));
  return (await rt.output(id)).state === 'completed' ? 'completed' : 'notFound';
}

/**
 * Cancel: the CANCEL signal goes into the journal, so the handler sees it (and can run its
 * compensations); what has not started yet ends at once as cancelled.
 */
export function cancel(rt: Runtime, id: string): Promise<Outcome> {
  return withInvocation(rt, id, async (host) => {
    const now = rt.now();
    if (['scheduled', 'pending', 'paused'].includes(host.status)) {
      await host.commit({ events: [{ type: 'kill', failure: { code: 409, message: 'Cancelled' }, now }] });
    } else if (!host.journal.signals.has(CANCEL_SIGNAL)) {
      const payload = encodeNotification({ signalId: CANCEL_SIGNAL, void: true });
      await host.commit({ entries: [{ type: MessageType.SignalNotification, payload }] });
    }
    return 'done';
  });
}

/** Kill: ends now, no user code runs. */
export function kill(rt: Runtime, id: string): Promise<Outcome> {
  return withInvocation(rt, id, async (host) => {
    await host.commit({ events: [{ type: 'kill', failure: { code: 409, message: 'killed' }, now: rt.now() }] });
    return 'done';
  });
}

export function pause(rt: Runtime, id: string): Promise<Outcome> {
  return withInvocation(rt, id, async (host) => {
    if (host.status === 'paused') return 'noop';
    if (!['running', 'suspended', 'backingOff'].includes(host.status)) return 'notRunning';
    await host.commit({ events: [{ type: 'pause', now: rt.now() }] });
    return 'done';
  });
}

export function resume(rt: Runtime, id: string): Promise<Outcome> {
  return withInvocation(rt, id, async (host) => {
    if (host.status !== 'paused') return 'noop';
    await host.commit({ events: [{ type: 'resume', now: rt.now() }] });
    return 'done';
  });
}

/** Purge: a completed invocation, its journal and its id are forgotten now. */
export async function purge(rt: Runtime, id: string): Promise<Outcome> {
  const out = await rt.output(id);
  if (out.state === 'missing') return 'notFound';
  if (out.state !== 'completed') return 'notCompleted';
  await rt.store.commit({ partition: rt.partitionOfId(id), deleteInvocations: [id], timersRemove: [timerKey.expire(id)] });
  return 'done';
}
