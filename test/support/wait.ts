/** Polls until a condition holds (every `everyMs`), or fails the test after `ms`. */
export async function waitFor(cond: () => Promise<boolean>, ms: number, everyMs = 25): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
