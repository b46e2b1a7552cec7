/**
 * The subscription scenario shared by the Redis Streams and NATS JetStream tests: 1000
 * messages over 10 keys, published at a steady pace while a test may crash things, into the
 * `Log` virtual object (services/subscriptions.mjs), which appends each message to its key's
 * list. Every list must end up holding its key's messages exactly once, in publish order.
 */
import type { ExecutionContext } from 'ava';
import type { Got } from 'got';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Stack } from './stack.js';

/** What the checks read: a node's ingress, and its output for failure messages. */
type Reader = Pick<Stack, 'ingress' | 'server'>;

export const MESSAGES = 1000;
export const KEYS = 10;

export const keyOf = (i: number) => `k${i % KEYS}`;
/** The message body: a JSON string, which the handler receives as its input. */
export const bodyOf = (i: number) => JSON.stringify(`m${i}`);

export async function subscribe(admin: Got, source: string, sink = 'service://Log/append'): Promise<string> {
  const res = await admin.post('subscriptions', {
    json: { source, sink, options: { 'auto.offset.reset': 'earliest' } },
  });
  if (res.statusCode !== 201) throw new Error(`subscription refused: ${res.statusCode} ${res.body}`);
  return (JSON.parse(res.body) as { id: string }).id;
}

/** Publishes message i to a Redis stream with an explicit entry id: an XADD resent after a reconnect cannot add it twice. */
export function streamProducer(url: string, stream: string) {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  const base = Date.now();
  return {
    async publish(i: number) {
      try {
        await redis.xadd(stream, `${base}-${i + 1}`, 'key', keyOf(i), 'value', bodyOf(i), 'source', 'test');
      } catch (err) {
        if (!String(err).includes('equal or smaller')) throw err;
      }
    },
    close: () => redis.quit(),
  };
}

export interface Disruption {
  /** Ms after publishing starts. */
  atMs: number;
  what: string;
  run(): Promise<void>;
}

/** SIGKILL the server and start it again on the same data. */
export const killServer = (stack: Stack, atMs: number): Disruption => ({
  atMs,
  what: 'SIGKILL the server',
  run: async () => {
    await stack.server.kill();
    await stack.server.restart();
  },
});

/**
 * Publishes message 0..MESSAGES-1 in order over about `durationMs`, while the disruptions run
 * at their times (one after another, beside the publishing).
 */
export async function publishAll(
  publish: (i: number) => Promise<void>,
  durationMs: number,
  disruptions: Disruption[] = [],
): Promise<void> {
  const started = Date.now();
  const disrupting = (async () => {
    for (const d of disruptions) {
      await sleep(Math.max(0, started + d.atMs - Date.now()));
      await d.run();
    }
  })();
  const chunk = 20;
  for (let i = 0; i < MESSAGES; i++) {
    await publish(i);
    if (i % chunk === chunk - 1) await sleep(Math.max(0, started + ((i + 1) * durationMs) / MESSAGES - Date.now()));
  }
  await disrupting;
}

interface LogState {
  items: string[];
  headers: Record<string, string>;
}

export async function logOf(stack: Reader, key: string): Promise<LogState> {
  const res = await stack.ingress.post(`Log/${key}/get`);
  if (res.statusCode !== 200) throw new Error(`Log/${key}/get: ${res.statusCode} ${res.body}`);
  return JSON.parse(res.body) as LogState;
}

/** Waits until every message is in its key's list, then checks each list: once each, in order. */
export async function expectEveryMessageOnceInOrder(
  t: ExecutionContext,
  stack: Reader,
  timeoutMs: number,
): Promise<Map<string, LogState>> {
  const deadline = Date.now() + timeoutMs;
  let logs = new Map<string, LogState>();
  for (;;) {
    logs = new Map(
      await Promise.all(
        Array.from({ length: KEYS }, async (_, k) => [keyOf(k), await logOf(stack, keyOf(k))] as const),
      ),
    );
    const total = [...logs.values()].reduce((n, l) => n + l.items.length, 0);
    if (total >= MESSAGES) break;
    if (Date.now() > deadline)
      throw new Error(`only ${total} of ${MESSAGES} messages handled:\n${stack.server.output().slice(-3000)}`);
    await sleep(250);
  }
  // Time for a message handled twice to show.
  await sleep(500);
  let failed = false;
  for (let k = 0; k < KEYS; k++) {
    const expected = Array.from({ length: MESSAGES / KEYS }, (_, j) => `m${j * KEYS + k}`);
    const items = (await logOf(stack, keyOf(k))).items;
    const same = JSON.stringify(items) === JSON.stringify(expected);
    failed ||= !same;
    // Says what went wrong before the whole list: twice, missing, or out of order.
    const twice = items.filter((m, i) => items.indexOf(m) !== i);
    const missing = expected.filter((m) => !items.includes(m));
    const unordered = items.filter((m, i) => i > 0 && Number(m.slice(1)) < Number(items[i - 1]!.slice(1)));
    t.true(
      same,
      `key ${keyOf(k)}: twice ${JSON.stringify(twice)}, missing ${JSON.stringify(missing)}, before their predecessor ${JSON.stringify(unordered)}`,
    );
  }
  if (failed) t.log(stack.server.output().slice(-6000));
  return logs;
}
