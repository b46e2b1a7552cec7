/**
 * The page's clock: one signal that ticks every second while something shows a relative time,
 * so "12 s ago" and "next retry in 40 s" keep counting without a reload.
 */
import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';

const now = signal(Date.now());
let users = 0;
let timer: ReturnType<typeof setInterval> | undefined;

/**
 * The current time, re-rendering the caller every second while it is mounted. Read afresh on
 * each render too: a render for another reason (a live change) must not show the tick's time,
 * up to a second old, against a newer timestamp ("in 230 ms" for what just happened).
 */
export function useNow(): number {
  useEffect(() => {
    if (users++ === 0) timer = setInterval(() => (now.value = Date.now()), 1000);
    return () => {
      if (--users === 0) clearInterval(timer);
    };
  }, []);
  return Math.max(now.value, Date.now());
}
