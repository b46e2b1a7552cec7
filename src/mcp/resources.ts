/**
 * What an agent can read to know what it operates: each service's OpenAPI document (as
 * GET /services/{name}/openapi serves it) and the XState machines every invocation and every
 * key's lock step through (their definitions as XState gives them: states, events, targets,
 * guard and action names).
 */
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { invocationMachine } from '../../machines/invocation.js';
import { objectKeyMachine } from '../../machines/object-key.js';
import { advertisedIngressUrl } from '../admin/app.js';
import { serviceNamed } from '../admin/routes/services.js';
import { serviceOpenApi } from '../registry/openapi.js';
import type { McpDeps } from './deps.js';

const JSON_TYPE = 'application/json';

const MACHINES = {
  invocation: {
    machine: invocationMachine,
    description:
      "The state machine of every invocation: created → scheduled/pending → running ⇄ suspended/backing-off/paused → completed. describe_invocation's `path` lists the transitions one invocation took through it.",
  },
  'object-key': {
    machine: objectKeyMachine,
    description: 'The lock of one virtual-object key or workflow id, with its inbox of invocations waiting for it.',
  },
};

export function registerResources(server: McpServer, deps: McpDeps): void {
  const ingressUrl = advertisedIngressUrl(deps.config);
  const openApiUri = (name: string) => `redstate://services/${encodeURIComponent(name)}/openapi`;
  server.registerResource(
    'service-openapi',
    new ResourceTemplate('redstate://services/{service}/openapi', {
      list: () => ({
        resources: deps.registry
          .listServices()
          .map((s) => ({ uri: openApiUri(s.name), name: `${s.name} OpenAPI`, mimeType: JSON_TYPE })),
      }),
    }),
    {
      title: 'OpenAPI document of a service',
      description: "A service's handlers as ingress paths, with their request and response schemas.",
      mimeType: JSON_TYPE,
    },
    (uri, { service }) => {
      const name = decodeURIComponent(String(service));
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: JSON_TYPE,
            text: JSON.stringify(serviceOpenApi(serviceNamed(deps.registry, name), ingressUrl)),
          },
        ],
      };
    },
  );
  for (const [name, { machine, description }] of Object.entries(MACHINES)) {
    const uri = `redstate://machines/${name}`;
    server.registerResource(
      `${name}-machine`,
      uri,
      { title: `The ${name} machine`, description, mimeType: JSON_TYPE },
      () => ({
        contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(machine.definition) }],
      }),
    );
  }
}
