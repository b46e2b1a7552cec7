/**
 * Where the ingress is, for the playground: the URL `GET /version` advertises, with the
 * page's own host when it advertises a wildcard's `localhost` (the page may be opened from
 * another machine).
 */
import { serverVersion } from '../api/version';

export async function ingressUrl(): Promise<string> {
  const url = new URL((await serverVersion()).ingress_endpoint);
  if (url.hostname === 'localhost') url.hostname = location.hostname;
  return url.toString().replace(/\/$/, '');
}
