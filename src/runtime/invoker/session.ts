/**
 * Where and how an attempt talks to its service: the handler, the deployment (the pinned one,
 * else the latest), the negotiated protocol version and the stream's request headers. Worked
 * out once per attempt, before anything is sent.
 */
import type { InvocationContext } from '../../../machines/invocation.js';
import type { Registry } from '../../registry/registry.js';
import type { Deployment, EffectiveHandler } from '../../registry/types.js';
import type { StreamTarget } from '../../protocol/transport.js';
import { negotiatedVersion } from '../../protocol/versions.js';

export interface Session {
  handler: EffectiveHandler;
  deployment: Deployment;
  version: number;
  /** Request/response endpoints only answer once the request is complete (§15). */
  requestResponse: boolean;
  /** Set when the invocation has no deployment pinned yet: its first commit pins this one. */
  pin?: string;
  contentType: string;
  stream: StreamTarget;
}

/** `admitted`: the handler the invocation was admitted with, used while the registry has not changed since. */
export function sessionFor(
  registry: Registry,
  enableV7: boolean,
  id: string,
  context: InvocationContext,
  admitted?: EffectiveHandler,
): Session {
  const { target } = context;
  const handler =
    admitted?.generation === registry.generation ? admitted : registry.resolveHandler(target.service, target.handler);
  if (!handler) throw new Error(`service '${target.service}' handler '${target.handler}' is not registered`);
  const pinned =
    context.deploymentId !== undefined && context.deploymentId !== handler.deployment.id
      ? registry.getDeployment(context.deploymentId)
      : undefined;
  const deployment = pinned ?? handler.deployment;
  const version = negotiatedVersion(deployment, enableV7);
  if (version === undefined) {
    throw new Error(
      `deployment ${deployment.id} supports protocol v${deployment.minProtocolVersion}..v${deployment.maxProtocolVersion}, not v5..v${enableV7 ? 7 : 6}`,
    );
  }
  const contentType = `application/vnd.restate.invocation.v${version}`;
  return {
    handler,
    deployment,
    version,
    requestResponse: deployment.protocolType === 'RequestResponse' || handler.inactivityTimeout === 0,
    ...(context.deploymentId === undefined ? { pin: deployment.id } : {}),
    contentType,
    stream: {
      uri: deployment.uri,
      path: `invoke/${encodeURIComponent(target.service)}/${encodeURIComponent(target.handler)}`,
      http11: deployment.httpVersion === 'HTTP/1.1',
      headers: {
        'content-type': contentType,
        accept: contentType,
        'x-restate-invocation-id': id,
        ...(target.key !== undefined ? { 'x-restate-service-key': encodeURIComponent(target.key) } : {}),
        ...deployment.additionalHeaders,
      },
    },
  };
}
