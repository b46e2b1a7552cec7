/**
 * The server's configuration: one typed object from defaults, environment and flags
 * (flags win over the environment). Bad values fail at start with one line.
 *
 * `settings` is the one table of what can be set: `--help` and README's settings table are
 * generated from it (test/unit/config.test.ts keeps README in step).
 */

import { parseRedisUrl } from './redis-url.js';

export type LogFormat = 'json' | 'pretty';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  ingressPort: number;
  adminPort: number;
  /** Node-to-node traffic, and `/metrics` where Restate's node port serves it, so existing scrape configs work. */
  nodePort: number;
  /** This node's name among the nodes sharing a Redis; unset: generated once and kept in `dataDir`. */
  nodeId: string | undefined;
  /** The host other nodes reach this one at; unset: `host`, or this machine's name when bound to every interface. */
  nodeAddress: string | undefined;
  /** Bind address of every listener. */
  host: string;
  /** Unset: the embedded store in `dataDir`. */
  redisUrl: string | undefined;
  dataDir: string;
  /** Mirrors Restate's `experimental-enable-vqueues`: scoped invocations, limit rules, virtual queues. */
  enableVqueues: boolean;
  /** Mirrors Restate's scoped virtual objects (feature `scoped_virtual_objects`): a scope on object calls, state per (scope, key). */
  enableScopedVirtualObjects: boolean;
  /** Mirrors Restate's `experimental-enable-protocol-v7`: talk v7 to deployments that support it. */
  enableProtocolV7: boolean;
  /** Fixed at creation, like Restate's `default-num-partitions`. */
  partitions: number;
  /** Ingress request body limit in bytes (Restate: `ingress.request-size-limit`, 32 MiB). */
  requestSizeLimit: number;
  /** On SIGTERM, how long (ms) requests in flight may still be answered before connections are closed. */
  shutdownGrace: number;
  /**
   * How long (ms) a write of the ingress or admin API waits for an unreachable store to come
   * back, and then settles what it did (store/confirmed.ts), before it answers 503.
   */
  storeOutageWait: number;
  /**
   * Replicas a Redis commit waits for (`WAIT`) before it is acknowledged: a number, or `auto`:
   * 1 while the primary has a replica connected, else 0 (src/store/redis/replication.ts).
   */
  redisWaitReplicas: number | 'auto';
  /** Unset: pretty when stdout is a terminal, JSON lines otherwise. */
  logFormat: LogFormat | undefined;
  logLevel: LogLevel;
  /** OTLP/HTTP collector; unset: no tracing, and the OpenTelemetry packages are never loaded. */
  tracingEndpoint: string | undefined;
  /** Bind address of the ingress; unset: `host`. */
  ingressHost: string | undefined;
  /** Bind address of the admin API; unset: `host`. */
  adminHost: string | undefined;
  /** PEM files for `rediss://`: a CA to trust beyond the system's, a client certificate and its key. */
  redisTlsCaFile: string | undefined;
  redisTlsCertFile: string | undefined;
  redisTlsKeyFile: string | undefined;
  /** Mirrors Restate's `request-identity-private-key-pem-file`: sign requests to deployments. */
  requestIdentityPrivateKeyPemFile: string | undefined;
  /** Bearer tokens (environment only: flags show in `ps`). Unset: no authentication. */
  adminToken: string | undefined;
  ingressToken: string | undefined;
  /** A file of tokens, one per line: `admin <token>`, `ingress <token>` or `any <token>`. */
  authTokensFile: string | undefined;
  /** `/query` limits (src/query/limits.ts). */
  queryTimeoutMs: number;
  queryMemoryLimitMb: number;
  queryMaxRows: number;
  queryMaxResultBytes: number;
  /** Invocations of one subscription created and not yet completed, at most (src/subscriptions/). */
  subscriptionMaxInFlight: number;
  /**
   * While invocations are being admitted, attempts that may be starting at once (stream opened,
   * the deployment's first frames not yet in); more wait their turn, so a burst of sends is
   * acknowledged before it is all executed.
   */
  startingAttempts: number;
  /**
   * Processes serving at once (src/workers.ts): each a node of the cluster over the store,
   * owning a share of the partitions, all sharing the ingress and admin ports. 1: this process alone.
   */
  workers: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const defaults: Config = {
  ingressPort: 8080,
  adminPort: 9070,
  nodePort: 5122,
  nodeId: undefined,
  nodeAddress: undefined,
  host: '0.0.0.0',
  redisUrl: undefined,
  dataDir: './.redstate',
  enableVqueues: false,
  enableScopedVirtualObjects: false,
  enableProtocolV7: false,
  partitions: 24,
  requestSizeLimit: 32 * 1024 * 1024,
  shutdownGrace: 10_000,
  storeOutageWait: 30_000,
  redisWaitReplicas: 'auto',
  logFormat: undefined,
  logLevel: 'info',
  tracingEndpoint: undefined,
  ingressHost: undefined,
  adminHost: undefined,
  redisTlsCaFile: undefined,
  redisTlsCertFile: undefined,
  redisTlsKeyFile: undefined,
  requestIdentityPrivateKeyPemFile: undefined,
  adminToken: undefined,
  ingressToken: undefined,
  authTokensFile: undefined,
  queryTimeoutMs: 30_000,
  queryMemoryLimitMb: 256,
  queryMaxRows: 100_000,
  queryMaxResultBytes: 32 * 1024 * 1024,
  subscriptionMaxInFlight: 1000,
  startingAttempts: 32,
  workers: 1,
};

type Parse = (raw: string, name: string) => Config[keyof Config];

interface Setting {
  key: keyof Config;
  /** Absent for secrets: flags show in `ps`. */
  flag?: string;
  env: string;
  /** What the value looks like, for `--help`: N, URL, DIR… */
  arg: string;
  /** One line for `--help` and README. */
  help: string;
  /** The default as people read it; without it, the value in `defaults`. */
  shownDefault?: string;
  parse: Parse;
}

function port(raw: string, name: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 0 || n > 65535) {
    throw new ConfigError(`${name}: '${raw}' is not a port number (0-65535)`);
  }
  return n;
}

function positiveInt(raw: string, name: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1) throw new ConfigError(`${name}: '${raw}' is not a positive integer`);
  return n;
}

function replicas(raw: string, name: string): number | 'auto' {
  if (raw === 'auto') return 'auto';
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name}: '${raw}' is neither 'auto' nor a number of replicas`);
  return Number(raw);
}

function bool(raw: string, name: string): boolean {
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off', ''].includes(v)) return false;
  throw new ConfigError(`${name}: '${raw}' is not a boolean (true/false)`);
}

function url(protocols: string[], example: string) {
  return (raw: string, name: string): string | undefined => {
    if (raw === '') return undefined;
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(`${name}: '${raw}' is not a URL (expected ${example})`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(`${name}: '${raw}' must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
    }
    return raw;
  };
}

function redisUrl(raw: string, name: string): string | undefined {
  if (raw === '') return undefined;
  try {
    parseRedisUrl(raw);
  } catch (err) {
    throw new ConfigError(`${name}: ${(err as Error).message}`);
  }
  return raw;
}

function oneOf<T extends string>(values: readonly T[]) {
  return (raw: string, name: string): T => {
    const v = raw.trim().toLowerCase();
    if (!(values as readonly string[]).includes(v))
      throw new ConfigError(`${name}: '${raw}' is not one of ${values.join(', ')}`);
    return v as T;
  };
}

function text(raw: string, name: string): string {
  if (raw === '') throw new ConfigError(`${name}: must not be empty`);
  return raw;
}

export const settings: readonly Setting[] = [
  {
    key: 'ingressPort',
    flag: '--ingress-port',
    env: 'REDSTATE_INGRESS_PORT',
    arg: 'N',
    help: 'ingress port: /restate/call, send, attach, output, awakeables',
    parse: port,
  },
  {
    key: 'adminPort',
    flag: '--admin-port',
    env: 'REDSTATE_ADMIN_PORT',
    arg: 'N',
    help: 'admin port: /deployments, /services, /invocations, /query, /health, /metrics',
    parse: port,
  },
  {
    key: 'nodePort',
    flag: '--node-port',
    env: 'REDSTATE_NODE_PORT',
    arg: 'N',
    help: "node-to-node traffic, and Prometheus /metrics as on Restate's node port",
    parse: port,
  },
  {
    key: 'nodeId',
    flag: '--node-id',
    env: 'REDSTATE_NODE_ID',
    arg: 'NAME',
    help: 'name of this node among those sharing one Redis',
    shownDefault: 'generated once, kept in the data dir',
    parse: text,
  },
  {
    key: 'nodeAddress',
    flag: '--node-address',
    env: 'REDSTATE_NODE_ADDRESS',
    arg: 'HOST',
    help: 'host the other nodes reach this one at (forwarded requests, deliveries)',
    shownDefault: "the --host value, or the machine's name when that is 0.0.0.0 or ::",
    parse: text,
  },
  {
    key: 'host',
    flag: '--host',
    env: 'REDSTATE_HOST',
    arg: 'ADDR',
    help: 'bind address of the three ports',
    parse: text,
  },
  {
    key: 'redisUrl',
    flag: '--redis-url',
    env: 'REDSTATE_REDIS_URL',
    arg: 'URL',
    help: 'Redis store, e.g. redis://127.0.0.1:6379, or a Redis Cluster: redis-cluster://host1:port1,host2:port2',
    shownDefault: 'unset: embedded store',
    parse: redisUrl,
  },
  {
    key: 'dataDir',
    flag: '--data-dir',
    env: 'REDSTATE_DATA_DIR',
    arg: 'DIR',
    help: 'directory of the embedded store (with Redis: only the node id); one process per directory',
    parse: text,
  },
  {
    key: 'partitions',
    flag: '--partitions',
    env: 'REDSTATE_PARTITIONS',
    arg: 'N',
    help: 'number of partitions; fixed when the store is created',
    parse: positiveInt,
  },
  {
    key: 'requestSizeLimit',
    flag: '--request-size-limit',
    env: 'REDSTATE_REQUEST_SIZE_LIMIT',
    arg: 'BYTES',
    help: 'largest ingress request body (also sizes the HTTP/2 sessions towards deployments)',
    shownDefault: '33554432 (32 MiB)',
    parse: positiveInt,
  },
  {
    key: 'shutdownGrace',
    flag: '--shutdown-grace',
    env: 'REDSTATE_SHUTDOWN_GRACE',
    arg: 'MS',
    help: 'on SIGTERM, how long requests in flight may still be answered before connections close',
    parse: positiveInt,
  },
  {
    key: 'storeOutageWait',
    flag: '--store-outage-wait',
    env: 'REDSTATE_STORE_OUTAGE_WAIT',
    arg: 'MS',
    help: 'how long an ingress or admin write waits for an unreachable store, then finds out what it did, before answering 503',
    parse: positiveInt,
  },
  {
    key: 'redisWaitReplicas',
    flag: '--redis-wait-replicas',
    env: 'REDSTATE_REDIS_WAIT_REPLICAS',
    arg: 'N|auto',
    help: 'replicas each Redis commit waits for (WAIT) before it is acknowledged; auto: 1 with Sentinel, or once a replica of the primary comes online (never fewer after)',
    parse: replicas,
  },
  {
    key: 'logFormat',
    flag: '--log-format',
    env: 'REDSTATE_LOG_FORMAT',
    arg: 'json|pretty',
    help: 'log line format',
    shownDefault: 'pretty on a terminal, else json',
    parse: oneOf(['json', 'pretty'] as const),
  },
  {
    key: 'logLevel',
    flag: '--log-level',
    env: 'REDSTATE_LOG_LEVEL',
    arg: 'LEVEL',
    help: `lowest level logged: ${LOG_LEVELS.join(', ')}`,
    parse: oneOf(LOG_LEVELS),
  },
  {
    key: 'tracingEndpoint',
    flag: '--tracing-endpoint',
    env: 'REDSTATE_TRACING_ENDPOINT',
    arg: 'URL',
    help: 'OTLP/HTTP collector for traces, e.g. http://localhost:4318',
    shownDefault: 'unset: no tracing',
    parse: url(['http:', 'https:'], 'http://host:4318'),
  },
  {
    key: 'enableVqueues',
    flag: '--experimental-enable-vqueues',
    env: 'REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES',
    arg: 'BOOL',
    help: "as Restate's experimental-enable-vqueues: scoped calls and sends, enforced limit rules, pausable virtual queues",
    parse: bool,
  },
  {
    key: 'enableScopedVirtualObjects',
    flag: '--experimental-enable-scoped-virtual-objects',
    env: 'REDSTATE_EXPERIMENTAL_ENABLE_SCOPED_VIRTUAL_OBJECTS',
    arg: 'BOOL',
    help: 'with vqueues: a scope on virtual-object calls too, state and lock per (scope, key)',
    parse: bool,
  },
  {
    key: 'enableProtocolV7',
    flag: '--experimental-enable-protocol-v7',
    env: 'REDSTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7',
    arg: 'BOOL',
    help: 'talk service protocol v7 to deployments that support it (else v6, like Restate 1.7)',
    parse: bool,
  },
  {
    key: 'ingressHost',
    flag: '--ingress-host',
    env: 'REDSTATE_INGRESS_HOST',
    arg: 'ADDR',
    help: 'bind address of the ingress',
    shownDefault: 'the --host value',
    parse: text,
  },
  {
    key: 'adminHost',
    flag: '--admin-host',
    env: 'REDSTATE_ADMIN_HOST',
    arg: 'ADDR',
    help: 'bind address of the admin API',
    shownDefault: 'the --host value',
    parse: text,
  },
  {
    key: 'redisTlsCaFile',
    flag: '--redis-tls-ca-file',
    env: 'REDSTATE_REDIS_TLS_CA_FILE',
    arg: 'FILE',
    help: "PEM of a CA to trust for rediss://, beyond the system's",
    shownDefault: 'unset',
    parse: text,
  },
  {
    key: 'redisTlsCertFile',
    flag: '--redis-tls-cert-file',
    env: 'REDSTATE_REDIS_TLS_CERT_FILE',
    arg: 'FILE',
    help: 'PEM client certificate for rediss://',
    shownDefault: 'unset',
    parse: text,
  },
  {
    key: 'redisTlsKeyFile',
    flag: '--redis-tls-key-file',
    env: 'REDSTATE_REDIS_TLS_KEY_FILE',
    arg: 'FILE',
    help: 'PEM key of that client certificate',
    shownDefault: 'unset',
    parse: text,
  },
  {
    key: 'requestIdentityPrivateKeyPemFile',
    flag: '--request-identity-private-key-pem-file',
    env: 'REDSTATE_REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE',
    arg: 'FILE',
    help: "sign requests to deployments with this Ed25519 key, as Restate's request identity",
    shownDefault: 'unset: unsigned',
    parse: text,
  },
  {
    key: 'adminToken',
    env: 'REDSTATE_ADMIN_TOKEN',
    arg: 'TOKEN',
    help: 'bearer token the admin API requires (environment only: flags show in ps)',
    shownDefault: 'unset: open',
    parse: text,
  },
  {
    key: 'ingressToken',
    env: 'REDSTATE_INGRESS_TOKEN',
    arg: 'TOKEN',
    help: 'bearer token the ingress requires (environment only)',
    shownDefault: 'unset: open',
    parse: text,
  },
  {
    key: 'authTokensFile',
    flag: '--auth-tokens-file',
    env: 'REDSTATE_AUTH_TOKENS_FILE',
    arg: 'FILE',
    help: "bearer tokens, one per line: 'admin|ingress|any <token>'",
    shownDefault: 'unset',
    parse: text,
  },
  {
    key: 'queryTimeoutMs',
    flag: '--query-timeout',
    env: 'REDSTATE_QUERY_TIMEOUT_MS',
    arg: 'MS',
    help: 'longest one /query request may run',
    parse: positiveInt,
  },
  {
    key: 'queryMemoryLimitMb',
    flag: '--query-memory-limit',
    env: 'REDSTATE_QUERY_MEMORY_LIMIT_MB',
    arg: 'MIB',
    help: "memory one /query request's engine may use",
    parse: positiveInt,
  },
  {
    key: 'queryMaxRows',
    flag: '--query-max-rows',
    env: 'REDSTATE_QUERY_MAX_ROWS',
    arg: 'N',
    help: 'most rows a /query answer may have',
    parse: positiveInt,
  },
  {
    key: 'queryMaxResultBytes',
    flag: '--query-max-result-bytes',
    env: 'REDSTATE_QUERY_MAX_RESULT_BYTES',
    arg: 'BYTES',
    help: 'largest /query answer',
    shownDefault: '33554432 (32 MiB)',
    parse: positiveInt,
  },
  {
    key: 'subscriptionMaxInFlight',
    flag: '--subscription-max-in-flight',
    env: 'REDSTATE_SUBSCRIPTION_MAX_IN_FLIGHT',
    arg: 'N',
    help: 'most invocations of one subscription created and not yet completed; then reading its source waits',
    parse: positiveInt,
  },
  {
    key: 'startingAttempts',
    flag: '--starting-attempts',
    env: 'REDSTATE_STARTING_ATTEMPTS',
    arg: 'N',
    help: "while invocations are being admitted, most attempts starting at once (until their deployment's first answer); the others wait their turn",
    parse: positiveInt,
  },
  {
    key: 'workers',
    flag: '--workers',
    env: 'REDSTATE_WORKERS',
    arg: 'N',
    help: 'processes serving at once, each owning a share of the partitions and sharing the ingress and admin ports',
    parse: positiveInt,
  },
];

/** Builds the config from `env` and `argv` (flags as `--name value` or `--name=value`). */
export function loadConfig(env: NodeJS.ProcessEnv, argv: string[]): Config {
  const config: Config = { ...defaults };
  const assign = (key: keyof Config, value: Config[keyof Config]) => {
    (config as unknown as Record<string, unknown>)[key] = value;
  };
  for (const s of settings) {
    const raw = env[s.env];
    if (raw !== undefined) assign(s.key, s.parse(raw, s.env));
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') continue;
    const [name, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const s = settings.find((x) => x.flag === name);
    if (!s) throw new ConfigError(`unknown flag '${name}' (see --help)`);
    const raw = inline ?? argv[++i];
    if (raw === undefined) throw new ConfigError(`${name}: missing value`);
    assign(s.key, s.parse(raw, name));
  }
  return config;
}

function shownDefault(s: Setting): string {
  return s.shownDefault ?? String(defaults[s.key]);
}

/** `--help`: every setting with its flag, environment variable and default. */
export function usage(): string {
  return [
    "redstate: a durable-execution server speaking Restate 1.7's ingress, admin and service protocol",
    '',
    'usage: npm start -- [flags]   (or: node dist/src/main.js [flags])',
    '',
    'Each setting is a flag or an environment variable; a flag wins over the environment.',
    '',
    ...settings.map(
      (s) =>
        `  ${s.flag ? `${s.flag} ${s.arg}` : `${s.env}=${s.arg}`}   [${s.flag ? `${s.env}, ` : 'environment only, '}default: ${shownDefault(s)}]\n      ${s.help}`,
    ),
    '',
  ].join('\n');
}

/** README's settings table (between its `settings` markers). */
export function settingsMarkdown(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return [
    '| flag | environment | default | what |',
    '|---|---|---|---|',
    ...settings.map(
      (s) => `| ${s.flag ? `\`${s.flag}\`` : '—'} | \`${s.env}\` | ${cell(shownDefault(s))} | ${cell(s.help)} |`,
    ),
  ].join('\n');
}
