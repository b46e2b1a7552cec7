// Serves an SDK endpoint for the tests on a port the kernel picks, and tells the test which:
// `READY <port>` (and `COUNTS <port>` for the counters server) on stdout. Choosing ports in
// the child avoids two test processes racing for one "free" port.
//
// env HTTP1=1  serve HTTP/1.1 request-response (http1Handler) instead of h2c bidi
import http from 'node:http';
import http2 from 'node:http2';

function listen(server, label, then = () => {}) {
  server.listen(0, '127.0.0.1', () => {
    console.log(`${label} ${server.address().port}`);
    then();
  });
}

/** `handler` is a request handler, or a Restate endpoint (its h2c or HTTP/1.1 handler is used). */
export function serve(endpoint, { counts, handler } = {}) {
  const http1 = process.env.HTTP1 === '1';
  const h = handler ?? (http1 ? endpoint.http1Handler() : endpoint.http2Handler());
  const ready = () => listen(http1 ? http.createServer(h) : http2.createServer(h), 'READY');
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
