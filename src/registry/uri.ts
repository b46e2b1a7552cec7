/**
 * Deployment URIs: how a registration's `uri` is normalised and when two URIs name the same
 * deployment (reference-behavior.md §3.3).
 */

/**
 * `scheme://authority/path/`, always ending in `/` so endpoint paths can be appended; query
 * and fragment dropped. `undefined` when the text is not an absolute URI with an authority.
 */
export function normaliseUri(text: string): string | undefined {
  if (text.length === 0 || /\s/.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.host === '') return undefined;
  const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  return `${url.protocol}//${url.host}${path}`;
}

/**
 * Whether two normalised URIs address the same deployment. The scheme is ignored: the
 * reference answered `ftp://localhost:9080` with its existing `http://localhost:9080/`
 * deployment (§3.3).
 */
export function sameEndpoint(a: string, b: string): boolean {
  const strip = (u: string) => u.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  return strip(a) === strip(b);
}
