/**
 * Every tool and resource of the MCP endpoint. The tools (their schemas) are built once; a
 * server holding them is made per request, as the endpoint is stateless (endpoint.ts).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { McpDeps } from './deps.js';
import { registerResources } from './resources.js';
import { invocationTools } from './tools/invocation-tools.js';
import { invokeTools } from './tools/invoke-tools.js';
import { operatorTools } from './tools/operator-tools.js';
import { queryTool } from './tools/query-tool.js';
import { registryTools } from './tools/registry-tools.js';
import { stateTools } from './tools/state-tools.js';

const INSTRUCTIONS = `redstate is a durable-execution server speaking Restate's interfaces. Services written with the Restate SDKs are registered as deployments; every call of a handler is a durable invocation (id inv_…) with a journal.
Start with list_services (handlers and their schemas), then call or send. Follow invocations with list_invocations and describe_invocation; query runs read-only SQL over the sys_* tables for anything else.`;

/** Makes a server with every tool and resource, ready to connect to one request's transport. */
export function mcpCatalog(deps: McpDeps, version: string): () => McpServer {
  const tools = [
    ...registryTools(deps),
    ...invokeTools(deps),
    ...invocationTools(deps),
    ...operatorTools(deps),
    ...stateTools(deps),
    ...queryTool(deps),
  ];
  return () => {
    const server = new McpServer({ name: 'redstate', version }, { instructions: INSTRUCTIONS });
    for (const t of tools) t.register(server, deps.log);
    registerResources(server, deps);
    return server;
  };
}
