/**
 * Registering a tool and shaping its answers: structured content plus a short text (and the
 * same JSON as text, for clients that read only text, as the MCP spec recommends). Whatever a
 * tool throws becomes a tool error (`isError`) with the message the HTTP APIs would give, so
 * the agent reads it; only what is not an answer (a bug) is logged.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { AdminEmptyError, AdminError, AdminTextError } from '../admin/errors.js';
import { DomainError, statusOf } from '../errors.js';
import { IngressError } from '../ingress/errors.js';
import { QueryError } from '../query/query-error.js';
import type { Logger } from '../telemetry/log.js';

/** Reads only. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Adds (an invocation, a completion, a deployment) and destroys nothing. */
export const ADDITIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
/** Ends, forgets or replaces something for good. */
export const DESTRUCTIVE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
};

export interface ToolSpec<S extends z.ZodRawShape> {
  title: string;
  description: string;
  input: S;
  annotations: ToolAnnotations;
  /** `signal` aborts when the client cancels the request or goes away. */
  run(args: z.infer<z.ZodObject<S>>, signal: AbortSignal): Promise<CallToolResult>;
}

/** A tool, its schema built once: servers are made per request (endpoint.ts), their tools are not. */
export interface Tool {
  register(server: McpServer, log: Logger): void;
}

export function tool<S extends z.ZodRawShape>(name: string, spec: ToolSpec<S>): Tool {
  // Strict: an argument the tool does not take is an error the agent sees, not silently
  // dropped. Widened: the SDK's callback type cannot be inferred through a generic shape.
  const inputSchema: z.ZodObject = z.strictObject(spec.input);
  const config = {
    title: spec.title,
    description: spec.description,
    inputSchema,
    annotations: { title: spec.title, ...spec.annotations },
  };
  return {
    register(server, log) {
      // The SDK checked the arguments against `inputSchema` before this runs.
      server.registerTool(name, config, (args, extra) =>
        spec.run(args as z.infer<z.ZodObject<S>>, extra.signal).catch((err: unknown) => failure(err, log, name)),
      );
    },
  };
}

export function answer(summary: string, structured: Record<string, unknown>): CallToolResult {
  return {
    content: [
      { type: 'text', text: summary },
      { type: 'text', text: JSON.stringify(structured) },
    ],
    structuredContent: structured,
  };
}

/** A tool error the agent can act on: what was wrong, with the status the HTTP APIs answer. */
function refusal(status: number, message: string, restateCode: string | null = null): CallToolResult {
  return {
    content: [{ type: 'text', text: message }],
    structuredContent: { error: { status, message, ...(restateCode ? { restate_code: restateCode } : {}) } },
    isError: true,
  };
}

function failure(err: unknown, log: Logger, tool: string): CallToolResult {
  if (err instanceof AdminError) return refusal(err.status, err.message, err.restateCode);
  if (err instanceof DomainError) return refusal(statusOf(err), err.message, err.code);
  if (err instanceof IngressError || err instanceof AdminTextError || err instanceof QueryError)
    return refusal(err.status, err.message);
  if (err instanceof AdminEmptyError)
    return refusal(err.status, err.status === 501 ? 'not implemented by this server' : err.message);
  log.error({ err, tool }, 'MCP tool failed');
  return refusal(500, `internal server error: ${err instanceof Error ? err.message : String(err)}`);
}
