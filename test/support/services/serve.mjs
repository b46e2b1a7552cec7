// Serves an SDK endpoint for the tests on a port the kernel picks, and tells the test which:
// `READY <port>` (and `COUNTS <port>` for the counters server) on stdout. Choosing ports in
// the child avoids two test processes racing for one "free" port.
//
// env HTTP1=1  serve HTTP/1.1 request-response (http1Handler) instead of h2c bidi
// env PORT     the endpoint's port (default: any free one)
import http from 'node:http';
import http2 from 'node:http2';

function listen(server, label, then = () => {}, port = 0) {
  server.listen(port, '127.0.0.1', () => {
    console.log(`${label} ${server.address().port}`);
    then();
  });
}

/** `handler` is a request handler, or a Restate endpoint (its h2c or HTTP/1.1 handler is used). */
export function serve(endpoint, { counts, handler } = {}) {
  const http1 = process.env.HTTP1 === '1';
  const h = handler ?? (http1 ? endpoint.http1Handler() : endpoint.http2Handler());
  // PORT pins the endpoint's port, for a test that restarts an endpoint at the same address.
  const ready = () =>
    listen(http1 ? http.createServer(h) : http2.createServer(h), 'READY', undefined, Number(process.env.PORT ?? 0));
  if (!counts) return ready();
  // COUNTS is printed before READY, so a test that saw READY knows both ports.
  listen(
    http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(counts));
    }),
    'COUNTS',
    ready,
  );
}

/** Counters a test reads on the COUNTS port; `bump(key)` adds one and returns the new count. */
export function counters() {
  const counts = {};
  return { counts, bump: (key) => (counts[key] = (counts[key] ?? 0) + 1) };
}
