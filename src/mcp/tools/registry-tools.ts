/** Services and their handlers, registering a deployment, health and version: the registry's side of the admin API. */
import * as z from 'zod';
import { InvalidRequest } from '../../errors.js';
import { advertisedIngressUrl } from '../../admin/app.js';
import { registerLogged } from '../../admin/routes/deployments.js';
import { versionView } from '../../admin/routes/meta.js';
import { serviceNamed } from '../../admin/routes/services.js';
import { registerResponseView, serviceView } from '../../admin/views.js';
import { normaliseUri } from '../../registry/uri.js';
import { StoreUnavailable } from '../../store/types.js';
import type { McpDeps } from '../deps.js';
import { ADDITIVE, answer, READ_ONLY, tool, type Tool } from '../tool.js';

export function registryTools(deps: McpDeps): Tool[] {
  const { registry, log } = deps;
  return [
    tool('list_services', {
      title: 'List services',
      description:
        'The registered services (plain services, virtual objects, workflows) with their handlers: each handler with its input and output JSON schemas, visibility, retention and retry settings. Give `service` for one only.',
      input: { service: z.string().optional().describe('Only this service') },
      annotations: READ_ONLY,
      async run({ service }) {
        const services = (service !== undefined ? [serviceNamed(registry, service)] : registry.listServices()).map(
          serviceView,
        );
        const summary =
          services.length === 0
            ? 'No services registered.'
            : services.map((s) => `${s.name} (${s.ty}): ${s.handlers.map((h) => h.name).join(', ')}`).join('\n');
        return answer(summary, { services });
      },
    }),
    tool('register_deployment', {
      title: 'Register a deployment',
      description:
        'Registers the SDK endpoint at `uri` (discovers its services), as POST /deployments does. An endpoint already registered is left as it is unless `force`.',
      input: {
        uri: z.string().describe('The endpoint, e.g. http://localhost:9080'),
        use_http_11: z.boolean().optional().describe('Request/response over HTTP/1.1 instead of HTTP/2 streams'),
        additional_headers: z
          .record(z.string(), z.string())
          .optional()
          .describe('Headers sent with every request to the endpoint'),
        force: z.boolean().optional().describe('Discover again and replace a deployment at the same URI'),
        breaking: z.boolean().optional().describe('Allow incompatible changes of service types'),
        dry_run: z.boolean().optional().describe('Discover and answer only; store nothing'),
      },
      annotations: { ...ADDITIVE, openWorldHint: true },
      async run(args) {
        const uri = normaliseUri(args.uri);
        if (uri === undefined) throw new InvalidRequest(`'${args.uri}' is not an http(s) URI`);
        const { created, deployment } = await registerLogged(
          registry,
          {
            uri,
            ...(args.use_http_11 !== undefined ? { useHttp11: args.use_http_11 } : {}),
            ...(args.additional_headers
              ? {
                  additionalHeaders: Object.fromEntries(
                    Object.entries(args.additional_headers).map(([k, v]) => [k.toLowerCase(), v]),
                  ),
                }
              : {}),
            ...(args.force !== undefined ? { force: args.force } : {}),
            ...(args.breaking !== undefined ? { breaking: args.breaking } : {}),
            ...(args.dry_run !== undefined ? { dryRun: args.dry_run } : {}),
          },
          log,
        );
        const view = registerResponseView(deployment);
        const what = args.dry_run ? 'Would register' : created ? 'Registered' : 'Already registered';
        return answer(
          `${what} ${deployment.id} with ${view.services.map((s) => s.name).join(', ') || 'no services'}.`,
          { created, ...view },
        );
      },
    }),
    tool('health', {
      title: 'Health',
      description: 'Whether the server can serve (its store answers), and the names of the registered services.',
      input: {},
      annotations: READ_ONLY,
      async run() {
        const services = registry.listServices().map((s) => s.name);
        try {
          await deps.ready();
        } catch (err) {
          if (!(err instanceof StoreUnavailable)) throw err;
          return answer(`Unhealthy: ${err.message}`, { healthy: false, reason: err.message, services });
        }
        return answer(`Healthy; ${services.length} services registered.`, { healthy: true, services });
      },
    }),
    tool('version', {
      title: 'Version',
      description:
        "The Restate version this server speaks, the admin API versions, the ingress's address and the experimental features in force (GET /version).",
      input: {},
      annotations: READ_ONLY,
      async run() {
        const view = versionView(deps.config, advertisedIngressUrl(deps.config));
        return answer(`Restate ${view.version}; ingress at ${view.ingress_endpoint}`, view);
      },
    }),
  ];
}
