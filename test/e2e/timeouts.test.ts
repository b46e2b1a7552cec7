/**
 * A hung or dead endpoint causes a retry, not a stuck invocation: the inactivity timeout asks
 * the SDK to suspend, the abort timeout gives the attempt up (service-protocol.md §11), and a
 * stream that breaks is a failed attempt that is retried.
 */
import test from 'ava';
import got from 'got';
import { startRedstate } from '../support/server.js';
import { startService } from '../support/sdk-service.js';
import { sqlRows } from '../support/stack.js';

const client = (prefixUrl: string) =>
  got.extend({ prefixUrl, throwHttpErrors: false, retry: { limit: 0 }, timeout: { request: 30_000 } });

test('a handler that never ends is aborted after the abort timeout and retried', async (t) => {
  const service = await startService('timeouts.mjs');
  const server = await startRedstate();
  try {
    t.is((await client(server.admin).post('deployments', { json: { uri: service.url } })).statusCode, 201);
    const started = Date.now();
    const res = await client(server.ingress).post('restate/call/Flaky/hangOnce', { json: 'h1' });
    t.is(res.statusCode, 200, server.output().slice(-2000));
    t.is(res.body, '"recovered h1"');
    // inactivity 200 ms + abort 300 ms + the first retry interval (500 ms).
    t.true(Date.now() - started >= 900);
  } finally {
    await server.stop();
    await service.stop();
  }
});

test('an endpoint that dies mid-attempt: the invocation is retried until it is back', async (t) => {
  const first = await startService('timeouts.mjs', { env: { DIE: '1' } });
  const server = await startRedstate();
  let second: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    t.is((await client(server.admin).post('deployments', { json: { uri: first.url } })).statusCode, 201);
    const call = client(server.ingress).post('restate/call/Flaky/dieOnce', { json: 'd1' });
    await new Promise<void>((resolve) => first.proc.once('exit', () => resolve()));
    second = await startService('timeouts.mjs', { env: { PORT: String(first.port) } });
    const res = await call;
    t.is(res.statusCode, 200, server.output().slice(-2000));
    t.is(res.body, '"survived d1"');
  } finally {
    await server.stop();
    await first.stop();
    await second?.stop();
  }
});

test('a journal mismatch fails the attempt; retries run out and the invocation pauses', async (t) => {
  const service = await startService('timeouts.mjs');
  const server = await startRedstate();
  try {
    const admin = client(server.admin);
    t.is((await admin.post('deployments', { json: { uri: service.url } })).statusCode, 201);
    const sent = await client(server.ingress).post('restate/send/Flaky/nondeterministic', { json: 'nd' });
    const { invocationId } = JSON.parse(sent.body) as { invocationId: string };
    const row = async () =>
      (
        await sqlRows(
          admin,
          `SELECT status, last_failure, retry_count FROM sys_invocation WHERE id = '${invocationId}'`,
        )
      )[0] ?? {};
    const deadline = Date.now() + 15_000;
    while ((await row())['status'] !== 'paused' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const r = await row();
    t.is(r['status'], 'paused', server.output().slice(-2000));
    // Restate 1.7.12 drops the invoker's columns (last_failure, retry_count) of a paused
    // invocation (observed on the reference from npm); the failure stays in sys_journal_events.
    t.is(r['last_failure'], undefined);
    t.is((await client(server.ingress).get(`restate/output/${invocationId}`)).statusCode, 470);
    const rows = await sqlRows(
      admin,
      `SELECT event_type, event_json FROM sys_journal_events WHERE id = '${invocationId}' ORDER BY event_type`,
    );
    t.deepEqual(
      rows.map((e) => e['event_type']),
      ['Paused', 'TransientError'],
    );
    t.like(JSON.parse(String(rows[1]!['event_json'])), { ty: 'TransientError', error_code: 570 });
  } finally {
    await server.stop();
    await service.stop();
  }
});
