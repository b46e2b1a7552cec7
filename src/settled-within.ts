/**
 * Waiting with a bound: `work`'s outcome, or `late()`'s (its value, or what it throws) when
 * `work` has not settled within `ms`. The timer is cleared either way, so a bound never keeps
 * the process alive or fires after the answer.
 */
export async function settledWithin<T, L>(work: Promise<T>, ms: number, late: () => L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<L>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(late());
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    }, ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
