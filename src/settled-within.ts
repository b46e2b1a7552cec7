/**
 * Waiting with a bound: `work`'s outcome, or `late()`'s (its value, or what it throws) when
 * `work` has not settled within `ms`. The timer is cleared either way, so a bound never keeps
 * the process alive or fires after the answer.
 *
 * An expired bound gives I/O that has already arrived one turn of the event loop before it
 * counts as late: a process the machine did not schedule for longer than `ms` wakes with both
 * the timer due and the answer in its socket, and Node runs due timers before it reads sockets.
 * Without that turn, a busy CI machine failed a Redis ping whose PONG had come in time.
 */
export async function settledWithin<T, L>(work: Promise<T>, ms: number, late: () => L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  let afterIo: NodeJS.Immediate | undefined;
  const expired = new Promise<L>((resolve, reject) => {
    timer = setTimeout(() => {
      // setImmediate runs after this turn's poll phase, where arrived I/O is handled.
      afterIo = setImmediate(() => {
        try {
          resolve(late());
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    }, ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
    if (afterIo) clearImmediate(afterIo);
  }
}
