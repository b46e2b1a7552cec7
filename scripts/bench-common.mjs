// What the bench scripts share: their options, and waiting for a server to answer.
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `--name value` from the command line, else `def`. */
export function option(args, name, def) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
}

export async function waitHttp(url, tries = 300) {
  for (let i = 0; i < tries; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`${url} did not come up`);
}
