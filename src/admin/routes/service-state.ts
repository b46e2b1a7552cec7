/**
 * `POST /services/{name}/state` (reference-behavior.md §3.4): replaces the whole state of one
 * virtual-object key (or workflow id) after whatever exclusive invocation runs on it
 * (runtime/services/state-mutations.ts). 202 once the mutation is stored; a `version` that no longer
 * matches drops it silently, as in the reference.
 */
import type Router from '@koa/router';
import { AdminError, AdminTextError } from '../errors.js';
import type { Registry } from '../../registry/registry.js';
import type { Runtime } from '../../runtime/runtime.js';
import { readJsonBody, sendEmpty } from '../http-io.js';
import { serviceNamed } from './services.js';
import { describeUnexpected, type JsonDocument, type JsonNode } from '../../http/serde-json.js';

const DESERIALIZE = 'Failed to deserialize the JSON body into the target type: ';

export interface ModifyServiceState {
  objectKey: string;
  version?: string;
  scope?: string;
  newState: Map<string, Uint8Array>;
}

/**
 * `ModifyServiceStateRequest {version?, object_key, new_state, scope?}` with serde's error
 * texts (field paths as serde_path_to_error prints them). A state value is a byte array or a
 * string (its UTF-8 bytes); unknown fields are ignored.
 */
export function decodeModifyServiceState(doc: JsonDocument): ModifyServiceState {
  const fail = (path: string | undefined, message: string, at: number) => {
    const p = doc.position(at);
    return new AdminTextError(
      422,
      `${DESERIALIZE}${path ? `${path}: ` : ''}${message} at line ${p.line} column ${p.column}`,
    );
  };
  const root = doc.root;
  if (root.kind !== 'object')
    throw fail(
      undefined,
      `invalid type: ${describeUnexpected(root)}, expected struct ModifyServiceStateRequest`,
      root.at,
    );
  const seen = new Set<string>();
  const out: Partial<ModifyServiceState> = {};
  const optionalString = (name: string, node: JsonNode): string | undefined => {
    if (node.kind === 'null') return undefined;
    if (node.kind !== 'string')
      throw fail(name, `invalid type: ${describeUnexpected(node)}, expected a string`, node.at);
    return node.value;
  };
  for (const [key, value] of root.entries) {
    if (!['version', 'object_key', 'new_state', 'scope'].includes(key)) continue;
    if (seen.has(key)) throw fail(undefined, `duplicate field \`${key}\``, value.at);
    seen.add(key);
    if (key === 'object_key') {
      if (value.kind !== 'string')
        throw fail(key, `invalid type: ${describeUnexpected(value)}, expected a string`, value.at);
      out.objectKey = value.value;
    } else if (key === 'version') {
      const v = optionalString(key, value);
      if (v !== undefined) out.version = v;
    } else if (key === 'scope') {
      const v = optionalString(key, value);
      if (v !== undefined) out.scope = v;
    } else {
      out.newState = decodeState(value, fail);
    }
  }
  if (out.objectKey === undefined) throw fail(undefined, 'missing field `object_key`', root.end);
  if (out.newState === undefined) throw fail(undefined, 'missing field `new_state`', root.end);
  return out as ModifyServiceState;
}

function decodeState(
  node: JsonNode,
  fail: (path: string | undefined, message: string, at: number) => AdminTextError,
): Map<string, Uint8Array> {
  if (node.kind !== 'object')
    throw fail('new_state', `invalid type: ${describeUnexpected(node)}, expected a map`, node.at);
  const state = new Map<string, Uint8Array>();
  for (const [key, value] of node.entries) {
    const path = `new_state.${key}`;
    if (value.kind === 'string') {
      state.set(key, Buffer.from(value.value, 'utf8'));
    } else if (value.kind === 'array') {
      const bytes = value.items.map((item, i) => {
        if (item.kind !== 'number' || !item.integer)
          throw fail(`${path}[${i}]`, `invalid type: ${describeUnexpected(item)}, expected u8`, item.at);
        if (item.value < 0 || item.value > 255)
          throw fail(`${path}[${i}]`, `invalid value: ${describeUnexpected(item)}, expected u8`, item.at);
        return item.value;
      });
      state.set(key, Uint8Array.from(bytes));
    } else {
      throw fail(path, `invalid type: ${describeUnexpected(value)}, expected byte array`, value.at);
    }
  }
  return state;
}

/**
 * Replaces the whole state of a key of `name`; resolves once the mutation is stored. Shared
 * with the admin's MCP endpoint (src/mcp/).
 */
export async function modifyServiceState(
  runtime: Runtime,
  registry: Registry,
  name: string,
  body: ModifyServiceState,
): Promise<void> {
  const service = serviceNamed(registry, name);
  if (service.ty === 'Service') throw new AdminError(400, `Cannot modify state for service type ${service.ty}`);
  // A scope targets scoped state (§3.4): accepted whatever the features, as the reference does.
  await runtime.submitStateMutation({
    service: service.name,
    key: body.objectKey,
    ...(body.scope !== undefined ? { scope: body.scope } : {}),
    state: body.newState,
    ...(body.version !== undefined ? { version: body.version } : {}),
  });
}

export function serviceStateRoutes(runtime: Runtime, registry: Registry): (router: Router) => void {
  return (router) => {
    router.post('/services/:service/state', async (ctx) => {
      // The body is checked before the service is looked up, as the reference's extractors do.
      const body = decodeModifyServiceState(readJsonBody(ctx));
      await modifyServiceState(runtime, registry, ctx.params['service'] ?? '', body);
      sendEmpty(ctx, 202);
    });
  };
}
