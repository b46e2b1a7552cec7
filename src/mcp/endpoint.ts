/**
 * `/mcp` on the admin port: the Model Context Protocol's Streamable HTTP transport, so coding
 * agents can operate the server (tools and resources: catalog.ts). Mounted on the admin router,
 * it sits behind the admin's bearer tokens and error funnel like every admin route.
 *
 * Stateless: every POST gets a fresh server and transport, answered as one JSON body. Nothing
 * is kept between requests, so any node of a cluster answers any request, and there is no
 * session to lose. The server therefore never starts a conversation: GET (a stream for
 * server-sent messages) and DELETE (ending a session) answer 405, which clients take as
 * "not offered".
 *
 * The MCP SDK and the tools (with zod) load on the first request, not at start-up: measured
 * under Node 22, they are 4.2 MiB of V8 heap and 6.8 MiB of RSS that a server nobody points an
 * agent at would carry all its life.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Router from '@koa/router';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Context } from 'koa';
import { projectRoot } from '../project-root.js';
import type { McpDeps } from './deps.js';

export const MCP_PATH = '/mcp';

/** A JSON-RPC error answered before any MCP server saw the request. */
function jsonRpcError(
  ctx: Context,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  ctx.status = status;
  ctx.set(headers);
  ctx.type = 'application/json';
  ctx.body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * The JSON body koa-body read as text (admin/http-io.ts `readBodies`), parsed; `value` is
 * undefined when none was read (another content type, which the transport refuses).
 */
function parsedBody(ctx: Context): { ok: true; value: unknown } | { ok: false } {
  const text: unknown = ctx.request.body;
  if (typeof text !== 'string') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** What answering needs, loaded once by the first request. */
interface Loaded {
  newServer: () => McpServer;
  Transport: typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js').StreamableHTTPServerTransport;
}

async function handle(ctx: Context, load: () => Promise<Loaded>): Promise<void> {
  if (ctx.method !== 'POST')
    return jsonRpcError(ctx, 405, -32000, 'Method not allowed: this server is stateless, POST only.', {
      allow: 'POST',
    });
  const body = parsedBody(ctx);
  if (!body.ok) return jsonRpcError(ctx, 400, -32700, 'Parse error: the body is not JSON');
  const { newServer, Transport } = await load();
  const server = newServer();
  const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  ctx.res.once('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  // The transport writes the response itself; should it fail before that, the funnel answers.
  ctx.respond = false;
  try {
    await transport.handleRequest(ctx.req, ctx.res, body.value);
  } catch (err) {
    ctx.respond = true;
    throw err;
  }
}

/** The `/mcp` route for `createAdminApp({ extraRoutes })`. */
export function mcpRoutes(deps: McpDeps): (router: Router) => void {
  const version = (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string })
    .version;
  let loaded: Promise<Loaded> | undefined;
  const load = () =>
    (loaded ??= Promise.all([
      import('./catalog.js'),
      import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    ]).then(([catalog, http]) => ({
      newServer: catalog.mcpCatalog(deps, version),
      Transport: http.StreamableHTTPServerTransport,
    })));
  return (router) => {
    router.all(MCP_PATH, (ctx) => handle(ctx, load));
  };
}
