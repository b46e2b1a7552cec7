/**
 * The source a subscription names: its URI's scheme picks the adapter, its cluster (from
 * `/kafka-clusters`) says where the broker is. `redis-stream://{stream}` without a cluster
 * reads the store's own Redis.
 *
 * Adapters are imported when a subscription first needs one: the Kafka client alone takes
 * about a second to load, which a server without Kafka subscriptions should not pay at start.
 */
import type { RedisOptions } from 'ioredis';
import { parseSource, type KafkaCluster, type Subscription } from '../../registry/extras.js';
import { startAtOf, type MessageSource } from '../source.js';

/** The store's Redis, when the server runs on one. */
export interface StoreRedis {
  url: string;
  options?: RedisOptions;
}

const servers = (c: KafkaCluster) =>
  (c.properties['bootstrap.servers'] ?? c.properties['metadata.broker.list'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Throws when the subscription cannot be read here (no such cluster, no store Redis). */
export async function openSource(
  s: Subscription,
  clusters: readonly KafkaCluster[],
  storeRedis: StoreRedis | undefined,
): Promise<MessageSource> {
  const uri = parseSource(s.source);
  if (!uri) throw new Error(`unsupported source ${s.source}`);
  const cluster = clusters.find((c) => c.name === uri.cluster);
  if (uri.cluster !== '' && !cluster) throw new Error(`cluster '${uri.cluster}' does not exist`);
  const group = s.options['group.id'] ?? s.id;
  const clientId = s.options['client.id'] ?? cluster?.properties['client.id'] ?? 'restate';
  const startAt = startAtOf(s.options);
  switch (uri.scheme) {
    case 'redis-stream': {
      const redis = cluster ? { url: servers(cluster)[0] ?? '' } : storeRedis;
      if (!redis) throw new Error(`${s.source} reads the store's Redis, but this server runs on the embedded store`);
      const { RedisStreamSource } = await import('./redis-stream.js');
      return new RedisStreamSource({
        url: redis.url,
        ...(redis.options ? { redis: redis.options } : {}),
        stream: uri.topic,
        group,
        consumer: clientId,
        startAt,
      });
    }
    case 'nats': {
      const { NatsJetStreamSource } = await import('./nats-jetstream.js');
      return new NatsJetStreamSource({ servers: servers(cluster!), subject: uri.topic, durable: group, startAt });
    }
    case 'kafka': {
      const { KafkaSource } = await import('./kafka.js');
      return new KafkaSource({ properties: cluster!.properties, topic: uri.topic, groupId: group, clientId, startAt });
    }
  }
}
