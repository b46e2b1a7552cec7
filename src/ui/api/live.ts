/**
 * The server's live updates (`GET /events`, src/admin/routes/live-events.ts): one shared
 * EventSource for the whole page. Pages subscribe to the changes they show; after a
 * reconnection they are told to reload, since changes may have been missed meanwhile.
 */
import { signal } from '@preact/signals';
import type { LiveChange } from '../../admin/routes/live-events';

export type { LiveChange, LiveInvocation } from '../../admin/routes/live-events';

export type LiveListener = (change: LiveChange | 'reconnected') => void;

/** Whether the stream is open; the header shows it. */
export const liveConnected = signal(false);

const listeners = new Set<LiveListener>();
let source: EventSource | undefined;
let everOpened = false;

/** Opens the stream; the app does it at start, so the header shows whether it is live. */
export function startLive(): void {
  if (source) return;
  source = new EventSource('/events');
  source.onopen = () => {
    liveConnected.value = true;
    if (everOpened) for (const l of listeners) l('reconnected');
    everOpened = true;
  };
  source.onerror = () => {
    liveConnected.value = false;
  };
  source.onmessage = (e: MessageEvent<string>) => {
    const change = JSON.parse(e.data) as LiveChange;
    for (const l of listeners) l(change);
  };
}

export function onLive(listener: LiveListener): () => void {
  startLive();
  listeners.add(listener);
  return () => listeners.delete(listener);
}
