/**
 * The node port (5122, as Restate's): `GET /metrics` for Prometheus, and whatever `extra`
 * handles (node-to-node calls, src/cluster/peers.ts). A plain node:http handler, so a scrape
 * never goes through the admin API's middleware.
 */
import http from 'node:http';
import { metricsText } from './metrics.js';

export function createNodeEndpoint(extra?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean): http.Server {
  return http.createServer((req, res) => {
    if (extra?.(req, res)) return;
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return end(res, 404);
    if (req.method !== 'GET' && req.method !== 'HEAD') return end(res, 405, { allow: 'GET,HEAD' });
    metricsText().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => end(res, 500),
    );
  });
}

function end(res: http.ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-length': 0 });
  res.end();
}
