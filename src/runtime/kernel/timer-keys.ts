/**
 * Durable timer keys. A key says what the timer is for, so the store needs no payload and a
 * timer that fires twice (a crash between firing and removal) is recognised by its key.
 */
export type TimerPurpose =
  | { kind: 'start'; invocationId: string }
  | { kind: 'retry'; invocationId: string }
  /** A completed invocation's retention is over: purge it. */
  | { kind: 'expire'; invocationId: string }
  | { kind: 'sleep'; invocationId: string; completionId: number };

export const timerKey = {
  start: (invocationId: string) => `start|${invocationId}`,
  retry: (invocationId: string) => `retry|${invocationId}`,
  expire: (invocationId: string) => `expire|${invocationId}`,
  sleep: (invocationId: string, completionId: number) => `sleep|${invocationId}|${completionId}`,
};

export function parseTimerKey(key: string): TimerPurpose | undefined {
  const [kind, invocationId, extra] = key.split('|');
  if (!invocationId) return undefined;
  if (kind === 'start' || kind === 'retry' || kind === 'expire') return { kind, invocationId };
  if (kind === 'sleep' && extra !== undefined) return { kind, invocationId, completionId: Number(extra) };
  return undefined;
}
