/**
 * For admin API tests that run the admin Koa app in-process: a config, and a store that keeps
 * only the registry document (in memory), which is all the registry routes need.
 */
import type { ExecutionContext } from 'ava';
import got, { type Response } from 'got';
import type Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../../src/config.js';
import type { Store } from '../../src/store/types.js';

export const testConfig: Config = { ...loadConfig({}, []), dataDir: './.redstate-test', enableProtocolV7: true };

/** Just the two registry methods of the Store; `box.doc` is the saved document. */
export function memoryStore(): { store: Store; box: { doc: unknown } } {
  const box: { doc: unknown } = { doc: undefined };
  const store = {
    loadRegistry: async () => structuredClone(box.doc),
    saveRegistry: async (doc: unknown) => void (box.doc = structuredClone(doc)),
  } as unknown as Store;
  return { store, box };
}

export type AdminCall = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Response<string>>;

/** Serves `app` on a free loopback port for one test; `call` sends JSON bodies as the CLI does. */
export async function serveAdmin(t: ExecutionContext, app: Koa): Promise<{ base: string; call: AdminCall }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = got.extend({
    prefixUrl: base,
    throwHttpErrors: false,
    retry: { limit: 0 },
    followRedirect: false,
    responseType: 'text',
  });
  const call: AdminCall = (method, path, body, headers = {}) =>
    client(path, {
      method: method as 'GET',
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    }) as Promise<Response<string>>;
  return { base, call };
}
