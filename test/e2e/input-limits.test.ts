/**
 * Input the reference accepts, redstate accepts (issue 9), and the limits it answers as the
 * reference does: object keys far longer than an LMDB key, on both stores, through calls and
 * POST /services/{name}/state; DELETE of a malformed invocation id; oversized request heads.
 */
import { createConnection } from 'node:net';
import test from 'ava';
import { startStack, storeKinds } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const json = (value: unknown) => [...Buffer.from(JSON.stringify(value))];

for (const store of storeKinds) {
  test.serial(`${store}: object keys of 6,000 bytes are called, counted and set through the admin API`, async (t) => {
    const stack = await startStack(store, { serviceFile: 'objects.mjs' });
    try {
      const key = `k-${'é'.repeat(3000)}`;
      const path = `restate/call/Counter/${encodeURIComponent(key)}`;
      t.is((await stack.ingress.post(`${path}/add`, { json: { delta: 2 } })).body, '2');
      t.is((await stack.ingress.post(`${path}/add`, { json: { delta: 3 } })).body, '5');
      const other = `${key}-other`;
      t.is(
        (await stack.ingress.post(`restate/call/Counter/${encodeURIComponent(other)}/add`, { json: { delta: 1 } }))
          .body,
        '1',
      );
      const res = await stack.admin.post('services/Counter/state', {
        json: { object_key: key, new_state: { count: json(40) } },
      });
      t.is(res.statusCode, 202, res.body);
      await waitFor(async () => (await stack.ingress.post(`${path}/get`, { json: null })).body === '40', 10_000);
      t.is(
        (await stack.ingress.post(`restate/call/Counter/${encodeURIComponent(other)}/get`, { json: null })).body,
        '1',
      );
      // And after a SIGKILL, from the store alone.
      await stack.server.kill();
      await stack.server.restart();
      t.is((await stack.ingress.post(`${path}/add`, { json: { delta: 2 } })).body, '42');
    } finally {
      await stack.stop();
    }
  });
}

/** Sends `head` on a raw connection and returns what comes back before the server closes it. */
function rawExchange(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: hostname, port: Number(port) });
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    socket.end(head);
  });
}

test('malformed invocation ids answer 400; oversized or broken request heads answer as hyper does', async (t) => {
  const stack = await startStack('embedded');
  try {
    for (const [path, reason] of [
      ['invocations/not-an-id', 'bad format'],
      ['invocations/inv_123', 'bad length'],
      ['invocations/dp_15mkDZVNLJ7axAH3QeEdtQt', "id doesn't match the expected type"],
      ['invocations/x_1abc?mode=kill', 'unrecognized resource type: x'],
    ] as const) {
      const res = await stack.admin.delete(path);
      t.is(res.statusCode, 400, path);
      t.is(
        res.body,
        JSON.stringify({
          message: `The request field 'invocation_id' is invalid. Reason: ${reason}`,
          restate_code: null,
        }),
        path,
      );
    }
    for (const url of [stack.server.ingress, stack.server.admin]) {
      const at = (target: string, headers = '') =>
        `GET ${target} HTTP/1.1\r\nhost: x\r\n${headers}connection: close\r\n\r\n`;
      t.regex(
        await rawExchange(url, at(`/${'a'.repeat(65_534)}`)),
        /^HTTP\/1\.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\n/,
      );
      t.regex(await rawExchange(url, at(`/${'a'.repeat(65_000)}`)), /^HTTP\/1\.1 (400|404) /);
      const fields = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}: v\r\n`).join('');
      t.regex(await rawExchange(url, at('/health', fields(99))), /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
      t.regex(await rawExchange(url, at('/health', fields(98))), /^HTTP\/1\.1 (200|400|404) /);
      t.regex(
        await rawExchange(url, at('/health', `x-big: ${'b'.repeat(446_000)}\r\n`)),
        /^HTTP\/1\.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n/,
      );
      t.regex(await rawExchange(url, at('/health', `x-big: ${'b'.repeat(100_000)}\r\n`)), /^HTTP\/1\.1 (200|400|404) /);
      t.is(
        await rawExchange(url, 'GARBAGE\r\n\r\n'),
        'HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n',
      );
    }
    t.is((await stack.ingress.get('restate/health')).statusCode, 200);
  } finally {
    await stack.stop();
  }
});
