/**
 * `GET /openapi`: the admin API's own OpenAPI 3.1 document, generated from the table of
 * operations below (reference-behavior.md §3.1: every path, method and operationId of the
 * reference, `info.version` 1.7.12). Schemas are kept minimal: request and response bodies
 * are described as JSON objects, errors with the admin error shape.
 */

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface QueryParam {
  name: string;
  type: 'string' | 'boolean' | 'integer';
  description: string;
}

interface Operation {
  method: Method;
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  /** Success status codes; the first one carries the body, if any. */
  ok: number[];
  /** Whether a success answers with a JSON body. */
  body?: boolean;
  /** Whether the request has a JSON body. */
  request?: boolean;
  query?: QueryParam[];
  deprecated?: boolean;
}

const force: QueryParam = { name: 'force', type: 'boolean', description: 'Remove even if it is still in use.' };
const deployment: QueryParam = {
  name: 'deployment',
  type: 'string',
  description: "'latest', 'keep' or a deployment id.",
};

const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/cluster-health',
    operationId: 'cluster_health',
    tag: 'cluster_health',
    summary: 'Cluster health',
    ok: [200],
    body: true,
    deprecated: true,
  },
  {
    method: 'get',
    path: '/deployments',
    operationId: 'list_deployments',
    tag: 'deployment',
    summary: 'List deployments',
    ok: [200],
    body: true,
  },
  {
    method: 'post',
    path: '/deployments',
    operationId: 'create_deployment',
    tag: 'deployment',
    summary: 'Register a deployment',
    ok: [201, 200],
    body: true,
    request: true,
  },
  {
    method: 'get',
    path: '/deployments/{deployment}',
    operationId: 'get_deployment',
    tag: 'deployment',
    summary: 'Get a deployment',
    ok: [200],
    body: true,
  },
  {
    method: 'delete',
    path: '/deployments/{deployment}',
    operationId: 'delete_deployment',
    tag: 'deployment',
    summary: 'Delete a deployment',
    ok: [202],
    query: [force],
  },
  {
    method: 'patch',
    path: '/deployments/{deployment}',
    operationId: 'update_deployment',
    tag: 'deployment',
    summary: 'Update a deployment',
    ok: [200],
    body: true,
    request: true,
  },
  { method: 'get', path: '/health', operationId: 'health', tag: 'health', summary: 'Admin API health', ok: [200] },
  {
    method: 'delete',
    path: '/invocations/{invocation_id}',
    operationId: 'delete_invocation',
    tag: 'invocation',
    summary: 'Cancel, kill or purge an invocation',
    ok: [202],
    query: [{ name: 'mode', type: 'string', description: 'cancel (default), kill or purge.' }],
    deprecated: true,
  },
  {
    method: 'patch',
    path: '/invocations/{invocation_id}/cancel',
    operationId: 'cancel_invocation',
    tag: 'invocation',
    summary: 'Cancel an invocation',
    ok: [202, 200],
  },
  {
    method: 'patch',
    path: '/invocations/{invocation_id}/kill',
    operationId: 'kill_invocation',
    tag: 'invocation',
    summary: 'Kill an invocation',
    ok: [200],
  },
  {
    method: 'patch',
    path: '/invocations/{invocation_id}/pause',
    operationId: 'pause_invocation',
    tag: 'invocation',
    summary: 'Pause an invocation',
    ok: [202, 200],
  },
  {
    method: 'patch',
    path: '/invocations/{invocation_id}/purge',
    operationId: 'purge_invocation',
    tag: 'invocation',
    summary: 'Purge a completed invocation',
    ok: [200],
  },
  {
    method: 'patch',
    path: '/invocations/{invocation_id}/purge-journal',
    operationId: 'purge_journal',
    tag: 'invocation',
    summary: 'Purge the journal of a completed invocation',
    ok: [200],
  },
  {
    method: 'patch',
    path: '/invocations/{invocation_id}/restart-as-new',
    operationId: 'restart_as_new_invocation',
    tag: 'invocation',
    summary: 'Restart a completed invocation as a new one',
    ok: [200],
    body: true,
    query: [
      { name: 'from', type: 'integer', description: 'Keep the journal up to this entry index (included).' },
      deployment,
    ],
  },
  {
    method: 'patch',
    path: '/invocations/{invocation_id}/resume',
    operationId: 'resume_invocation',
    tag: 'invocation',
    summary: 'Resume an invocation',
    ok: [200],
    query: [deployment],
  },
  {
    method: 'get',
    path: '/kafka-clusters',
    operationId: 'list_kafka_clusters',
    tag: 'kafka_cluster',
    summary: 'List Kafka clusters',
    ok: [200],
    body: true,
  },
  {
    method: 'post',
    path: '/kafka-clusters',
    operationId: 'create_kafka_cluster',
    tag: 'kafka_cluster',
    summary: 'Create a Kafka cluster',
    ok: [201],
    body: true,
    request: true,
  },
  {
    method: 'get',
    path: '/kafka-clusters/{cluster_name}',
    operationId: 'get_kafka_cluster',
    tag: 'kafka_cluster',
    summary: 'Get a Kafka cluster',
    ok: [200],
    body: true,
    query: [{ name: 'include_subscriptions', type: 'boolean', description: 'Also list its subscriptions.' }],
  },
  {
    method: 'delete',
    path: '/kafka-clusters/{cluster_name}',
    operationId: 'delete_kafka_cluster',
    tag: 'kafka_cluster',
    summary: 'Delete a Kafka cluster',
    ok: [202],
    query: [force],
  },
  {
    method: 'patch',
    path: '/kafka-clusters/{cluster_name}',
    operationId: 'update_kafka_cluster',
    tag: 'kafka_cluster',
    summary: 'Update a Kafka cluster',
    ok: [200],
    body: true,
    request: true,
  },
  {
    method: 'put',
    path: '/limits/rules',
    operationId: 'upsert_rules',
    tag: 'rule',
    summary: 'Create or update rules',
    ok: [200],
    body: true,
    request: true,
  },
  {
    method: 'post',
    path: '/limits/rules/bulk-delete',
    operationId: 'bulk_delete_rules',
    tag: 'rule',
    summary: 'Delete rules',
    ok: [200],
    body: true,
    request: true,
  },
  {
    method: 'post',
    path: '/query',
    operationId: 'query',
    tag: 'introspection',
    summary: 'SQL over the system tables',
    ok: [200],
    body: true,
    request: true,
  },
  {
    method: 'get',
    path: '/services',
    operationId: 'list_services',
    tag: 'service',
    summary: 'List services',
    ok: [200],
    body: true,
  },
  {
    method: 'get',
    path: '/services/{service}',
    operationId: 'get_service',
    tag: 'service',
    summary: 'Get a service',
    ok: [200],
    body: true,
  },
  {
    method: 'patch',
    path: '/services/{service}',
    operationId: 'modify_service',
    tag: 'service',
    summary: 'Change service settings',
    ok: [200],
    body: true,
    request: true,
  },
  {
    method: 'get',
    path: '/services/{service}/handlers',
    operationId: 'list_service_handlers',
    tag: 'service_handler',
    summary: 'List handlers',
    ok: [200],
    body: true,
  },
  {
    method: 'get',
    path: '/services/{service}/handlers/{handler}',
    operationId: 'get_service_handler',
    tag: 'service_handler',
    summary: 'Get a handler',
    ok: [200],
    body: true,
  },
  {
    method: 'get',
    path: '/services/{service}/openapi',
    operationId: 'get_service_openapi',
    tag: 'service',
    summary: 'OpenAPI document of a service',
    ok: [200],
    body: true,
  },
  {
    method: 'post',
    path: '/services/{service}/state',
    operationId: 'modify_service_state',
    tag: 'service',
    summary: 'Replace the state of a key',
    ok: [202],
    request: true,
  },
  {
    method: 'get',
    path: '/subscriptions',
    operationId: 'list_subscriptions',
    tag: 'subscription',
    summary: 'List subscriptions',
    ok: [200],
    body: true,
    query: [
      { name: 'sink', type: 'string', description: 'Only subscriptions with this sink.' },
      { name: 'source', type: 'string', description: 'Only subscriptions with this source.' },
    ],
  },
  {
    method: 'post',
    path: '/subscriptions',
    operationId: 'create_subscription',
    tag: 'subscription',
    summary: 'Create a subscription',
    ok: [201],
    body: true,
    request: true,
  },
  {
    method: 'get',
    path: '/subscriptions/{subscription}',
    operationId: 'get_subscription',
    tag: 'subscription',
    summary: 'Get a subscription',
    ok: [200],
    body: true,
  },
  {
    method: 'delete',
    path: '/subscriptions/{subscription}',
    operationId: 'delete_subscription',
    tag: 'subscription',
    summary: 'Delete a subscription',
    ok: [202],
  },
  {
    method: 'get',
    path: '/version',
    operationId: 'version',
    tag: 'version',
    summary: 'Server and admin API versions',
    ok: [200],
    body: true,
  },
  {
    method: 'post',
    path: '/vqueues/{vqueue_id}/pause',
    operationId: 'pause_vqueue',
    tag: 'vqueue',
    summary: 'Pause a virtual queue',
    ok: [202],
  },
  {
    method: 'post',
    path: '/vqueues/{vqueue_id}/resume',
    operationId: 'resume_vqueue',
    tag: 'vqueue',
    summary: 'Resume a virtual queue',
    ok: [202],
  },
];

const TAGS: Record<string, string> = {
  deployment: 'Deployments',
  invocation: 'Invocations',
  subscription: 'Kafka subscriptions',
  kafka_cluster: 'Kafka clusters',
  service: 'Services',
  service_handler: 'Service handlers',
  vqueue: 'Virtual queues',
  cluster_health: 'Cluster health',
  health: 'Health',
  version: 'Version',
  introspection: 'SQL introspection',
  rule: 'Concurrency-limit rules',
};

const ERROR_STATUSES: Record<number, string> = {
  400: 'BadRequest',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  422: 'UnprocessableEntity',
  500: 'InternalServerError',
};

const json = (schema: unknown) => ({ 'application/json': { schema } });

function operationObject(op: Operation): Record<string, unknown> {
  const pathParams = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const queryParams = (op.query ?? []).map((q) => ({
    name: q.name,
    in: 'query',
    required: false,
    description: q.description,
    schema: { type: [q.type, 'null'] },
  }));
  const responses: Record<string, unknown> = {};
  op.ok.forEach((status, i) => {
    responses[String(status)] =
      i === 0 && op.body ? { description: 'Success', content: json({ type: 'object' }) } : { description: 'Success' };
  });
  for (const [status, name] of Object.entries(ERROR_STATUSES))
    responses[status] = { $ref: `#/components/responses/${name}` };
  return {
    tags: [op.tag],
    summary: op.summary,
    operationId: op.operationId,
    ...(pathParams.length + queryParams.length > 0 ? { parameters: [...pathParams, ...queryParams] } : {}),
    ...(op.request ? { requestBody: { required: true, content: json({ type: 'object' }) } } : {}),
    responses,
    ...(op.deprecated ? { deprecated: true } : {}),
  };
}

export function adminOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) (paths[op.path] ??= {})[op.method] = operationObject(op);
  const errorResponse = (description: string) => ({
    description,
    content: json({ $ref: '#/components/schemas/ErrorDescriptionResponse' }),
  });
  return {
    openapi: '3.1.0',
    info: { title: 'Admin API', description: 'Admin operations of a Restate-compatible server.', version: '1.7.12' },
    paths,
    components: {
      schemas: {
        ErrorDescriptionResponse: {
          type: 'object',
          required: ['message'],
          properties: { message: { type: 'string' }, restate_code: { type: ['string', 'null'] } },
        },
      },
      responses: Object.fromEntries(
        Object.entries(ERROR_STATUSES).map(([status, name]) => [name, errorResponse(`Error ${status}`)]),
      ),
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
  };
}
