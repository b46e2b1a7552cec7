/**
 * Where the ingress is, for the playground: the URL `GET /version` advertises, with the
 * page's own host when it advertises a wildcard's `localhost` (the page may be opened from
 * another machine).
 */
import { request } from '../api/http';

let cached: Promise<string> | undefined;

export function ingressUrl(): Promise<string> {
  cached ??= request<{ ingress_endpoint: string }>('GET', '/version').then((v) => {
    const url = new URL(v.ingress_endpoint);
    if (url.hostname === 'localhost') url.hostname = location.hostname;
    return url.toString().replace(/\/$/, '');
  });
  return cached;
}
