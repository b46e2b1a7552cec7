/**
 * Health, version, cluster health and the root redirect (reference-behavior.md §3.1, §3.2).
 */
import type Router from '@koa/router';
import type { Config } from '../../config.js';
import { sendEmpty, sendJson } from '../http-io.js';

export const ADMIN_API_VERSIONS = { min: 2, max: 4 } as const;
const SERVER_VERSION = '1.7.12';

/** Restate's experimental feature flags, in the order of §3.2; we implement two of them. */
function features(config: Config): Record<string, boolean> {
  return {
    vqueues: config.enableVqueues,
    vqueue_obsolete_cleanup: false,
    vqueues_migration_skip_completed: false,
    scoped_promise_table_migration: false,
    protocol_v7: config.enableProtocolV7,
    invoker_yield: false,
    scoped_virtual_objects: config.enableVqueues && config.enableScopedVirtualObjects,
    kafka_scope: false,
    scoped_state_table_migration: false,
    unique_random_seeds: false,
    vqueues_async_refill: false,
    preflight_invocation_termination_retention: false,
  };
}

/** `GET /version` (§3.2). */
export function versionView(config: Config, ingressUrl: string) {
  return {
    version: SERVER_VERSION,
    min_admin_api_version: ADMIN_API_VERSIONS.min,
    max_admin_api_version: ADMIN_API_VERSIONS.max,
    ingress_endpoint: ingressUrl,
    features: features(config),
  };
}

/**
 * `ready` is the readiness check: it rejects with `StoreUnavailable` while the store cannot be
 * reached, which the funnel answers 503.
 */
/** The nodes sharing the store, as this node last saw them, and each partition's holder. */
export type ClusterView = () => {
  nodeId: string;
  nodes: Array<{ nodeId: string; node: string }>;
  leases: Array<{ partition: number; nodeId: string | undefined }>;
};

export function metaRoutes(
  router: Router,
  config: Config,
  ingressUrl: string,
  ready: () => Promise<void>,
  cluster?: ClusterView,
): void {
  router.get('/health', async (ctx) => {
    await ready();
    sendEmpty(ctx, 200);
  });

  router.get('/version', (ctx) => sendJson(ctx, 200, versionView(config, ingressUrl)));

  // Restate's shape (members by number); nodes sharing a Redis add every live node with the
  // partitions it holds. The embedded store is one node: the reference's answer exactly.
  router.get('/cluster-health', (ctx) => {
    const view = cluster?.();
    if (!view) return sendJson(ctx, 200, { cluster_name: 'localcluster', metadata_cluster_health: { members: [1] } });
    const nodes = view.nodes.map((n) => ({
      node_id: n.nodeId,
      address: n.node,
      partitions: view.leases.filter((l) => l.nodeId === n.nodeId).map((l) => l.partition),
    }));
    sendJson(ctx, 200, {
      cluster_name: 'localcluster',
      metadata_cluster_health: { members: nodes.map((_, i) => i + 1) },
      nodes,
    });
  });

  router.get('/', (ctx) => sendEmpty(ctx, 308, { location: '/ui/' }));
}
