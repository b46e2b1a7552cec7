/**
 * Under which service name a key's state and a workflow's promises are stored. State is per
 * (scope, key) (reference-behavior.md §2.9): a scoped key's is stored under the service name
 * followed by a unit separator (U+001F, which no service name holds) and the scope, so it is
 * apart from the unscoped key's, and the store needs no new dimension.
 */
const SEPARATOR = '\u001f';

export function storedService(target: { service: string; scope?: string }): string {
  return target.scope === undefined ? target.service : `${target.service}${SEPARATOR}${target.scope}`;
}

/** Back from a stored service name to the service and the scope (for /query). */
export function splitStoredService(stored: string): { service: string; scope?: string } {
  const at = stored.indexOf(SEPARATOR);
  return at < 0 ? { service: stored } : { service: stored.slice(0, at), scope: stored.slice(at + 1) };
}
