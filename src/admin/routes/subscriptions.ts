/**
 * `/kafka-clusters` and `/subscriptions` (reference-behavior.md §3.7): HTTP in, registry call,
 * view out. Configuration only: nothing here connects to a broker, and no subscription is ever
 * consumed (this server has no Kafka client; see registry/extras.ts).
 */
import type Router from '@koa/router';
import {
  createCluster,
  createSubscription,
  deleteCluster,
  deleteSubscription,
  getCluster,
  getSubscription,
  parseSource,
  updateCluster,
  type KafkaCluster,
  type Subscription,
} from '../../registry/extras.js';
import type { Registry } from '../../registry/registry.js';
import {
  decodeCreateCluster,
  decodeCreateSubscription,
  decodeUpdateCluster,
  subscriptionParam,
} from '../extras-requests.js';
import { readJsonBody, sendEmpty, sendJson } from '../http-io.js';
import { boolQuery } from '../requests.js';
import { rfc3339Nanos } from '../../timestamps.js';

/** `2026-11-22T01:46:46.688000000Z`: nanosecond precision, as the reference prints it. */

const clusterView = (c: KafkaCluster) => ({
  name: c.name,
  properties: c.properties,
  created_at: rfc3339Nanos(c.createdAt),
});
const subscriptionView = (s: Subscription) => ({ id: s.id, source: s.source, sink: s.sink, options: s.options });

function lastQuery(query: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const raw = query[name];
  return Array.isArray(raw) ? raw[raw.length - 1] : raw;
}

export function subscriptionRoutes(router: Router, registry: Registry): void {
  router.get('/kafka-clusters', (ctx) => {
    sendJson(ctx, 200, { clusters: registry.getExtras().kafkaClusters.map(clusterView) });
  });

  router.post('/kafka-clusters', async (ctx) => {
    const { name, properties } = decodeCreateCluster(readJsonBody(ctx));
    const cluster = await registry.changeExtras((x) => createCluster(x, name, properties, Date.now()));
    sendJson(ctx, 201, clusterView(cluster), { location: `kafka-clusters/${name}` });
  });

  router.get('/kafka-clusters/:name', (ctx) => {
    const name = ctx.params['name'] ?? '';
    const include = boolQuery(ctx.query, 'include_subscriptions');
    const extras = registry.getExtras();
    const cluster = getCluster(extras, name);
    // The reference always has the list here (empty unless asked for); the CLI's `edit` and `patch` need it.
    const subscriptions = include
      ? extras.subscriptions.filter((s) => parseSource(s.source)?.cluster === name).map(subscriptionView)
      : [];
    sendJson(ctx, 200, { ...clusterView(cluster), subscriptions });
  });

  router.patch('/kafka-clusters/:name', async (ctx) => {
    const name = ctx.params['name'] ?? '';
    const properties = decodeUpdateCluster(readJsonBody(ctx));
    sendJson(ctx, 200, clusterView(await registry.changeExtras((x) => updateCluster(x, name, properties))));
  });

  router.delete('/kafka-clusters/:name', async (ctx) => {
    const name = ctx.params['name'] ?? '';
    const force = boolQuery(ctx.query, 'force');
    await registry.changeExtras((x) => deleteCluster(x, name, force));
    sendEmpty(ctx, 202);
  });

  router.get('/subscriptions', (ctx) => {
    const sink = lastQuery(ctx.query, 'sink');
    const source = lastQuery(ctx.query, 'source');
    const subscriptions = registry
      .getExtras()
      .subscriptions.filter(
        (s) => (sink === undefined || s.sink === sink) && (source === undefined || s.source === source),
      );
    sendJson(ctx, 200, { subscriptions: subscriptions.map(subscriptionView) });
  });

  router.post('/subscriptions', async (ctx) => {
    const body = decodeCreateSubscription(readJsonBody(ctx));
    const exists = (service: string, handler: string) => registry.resolveHandler(service, handler) !== undefined;
    const subscription = await registry.changeExtras((x) => createSubscription(x, body, exists));
    sendJson(ctx, 201, subscriptionView(subscription), { location: `subscriptions/${subscription.id}` });
  });

  router.get('/subscriptions/:subscription', (ctx) => {
    const id = subscriptionParam(ctx.params['subscription'] ?? '');
    sendJson(ctx, 200, subscriptionView(getSubscription(registry.getExtras(), id)));
  });

  router.delete('/subscriptions/:subscription', async (ctx) => {
    const id = subscriptionParam(ctx.params['subscription'] ?? '');
    await registry.changeExtras((x) => deleteSubscription(x, id));
    sendEmpty(ctx, 202);
  });
}
