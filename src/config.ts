/**
 * The server's configuration: one typed object from defaults, environment and flags
 * (flags win over the environment). Bad values fail at start with one line.
 */

export interface Config {
  ingressPort: number;
  adminPort: number;
  /** Bind address of both listeners. */
  host: string;
  /** Unset: the embedded store in `dataDir`. */
  redisUrl: string | undefined;
  dataDir: string;
  /** Mirrors Restate's `experimental-enable-vqueues`. */
  enableVqueues: boolean;
  /** Mirrors Restate's `experimental-enable-protocol-v7`: talk v7 to deployments that support it. */
  enableProtocolV7: boolean;
  /** Fixed at creation, like Restate's `default-num-partitions`. */
  partitions: number;
  /** Ingress request body limit in bytes (Restate: `ingress.request-size-limit`, 32 MiB). */
  requestSizeLimit: number;
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
  host: '0.0.0.0',
  redisUrl: undefined,
  dataDir: './.redstate',
  enableVqueues: false,
  enableProtocolV7: false,
  partitions: 24,
  requestSizeLimit: 32 * 1024 * 1024,
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
};

interface Setting {
  key: keyof Config;
  env: string;
  flag?: string;
  parse: (raw: string, name: string) => Config[keyof Config];
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

function bool(raw: string, name: string): boolean {
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off', ''].includes(v)) return false;
  throw new ConfigError(`${name}: '${raw}' is not a boolean (true/false)`);
}

function redisUrl(raw: string, name: string): string | undefined {
  if (raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name}: '${raw}' is not a URL (expected redis://host:port)`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ConfigError(`${name}: '${raw}' must start with redis:// or rediss://`);
  }
  return raw;
}

function text(raw: string, name: string): string {
  if (raw === '') throw new ConfigError(`${name}: must not be empty`);
  return raw;
}

const settings: Setting[] = [
  { key: 'ingressPort', env: 'REDSTATE_INGRESS_PORT', flag: '--ingress-port', parse: port },
  { key: 'adminPort', env: 'REDSTATE_ADMIN_PORT', flag: '--admin-port', parse: port },
  { key: 'host', env: 'REDSTATE_HOST', flag: '--host', parse: text },
  { key: 'redisUrl', env: 'REDSTATE_REDIS_URL', flag: '--redis-url', parse: redisUrl },
  { key: 'dataDir', env: 'REDSTATE_DATA_DIR', flag: '--data-dir', parse: text },
  { key: 'enableVqueues', env: 'REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES', parse: bool },
  { key: 'enableProtocolV7', env: 'REDSTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7', parse: bool },
  { key: 'partitions', env: 'REDSTATE_PARTITIONS', parse: positiveInt },
  { key: 'requestSizeLimit', env: 'REDSTATE_REQUEST_SIZE_LIMIT', flag: '--request-size-limit', parse: positiveInt },
  { key: 'ingressHost', env: 'REDSTATE_INGRESS_HOST', flag: '--ingress-host', parse: text },
  { key: 'adminHost', env: 'REDSTATE_ADMIN_HOST', flag: '--admin-host', parse: text },
  { key: 'redisTlsCaFile', env: 'REDSTATE_REDIS_TLS_CA_FILE', flag: '--redis-tls-ca-file', parse: text },
  { key: 'redisTlsCertFile', env: 'REDSTATE_REDIS_TLS_CERT_FILE', flag: '--redis-tls-cert-file', parse: text },
  { key: 'redisTlsKeyFile', env: 'REDSTATE_REDIS_TLS_KEY_FILE', flag: '--redis-tls-key-file', parse: text },
  {
    key: 'requestIdentityPrivateKeyPemFile',
    env: 'REDSTATE_REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE',
    flag: '--request-identity-private-key-pem-file',
    parse: text,
  },
  { key: 'adminToken', env: 'REDSTATE_ADMIN_TOKEN', parse: text },
  { key: 'ingressToken', env: 'REDSTATE_INGRESS_TOKEN', parse: text },
  { key: 'authTokensFile', env: 'REDSTATE_AUTH_TOKENS_FILE', flag: '--auth-tokens-file', parse: text },
  { key: 'queryTimeoutMs', env: 'REDSTATE_QUERY_TIMEOUT_MS', parse: positiveInt },
  { key: 'queryMemoryLimitMb', env: 'REDSTATE_QUERY_MEMORY_LIMIT_MB', parse: positiveInt },
  { key: 'queryMaxRows', env: 'REDSTATE_QUERY_MAX_ROWS', parse: positiveInt },
  { key: 'queryMaxResultBytes', env: 'REDSTATE_QUERY_MAX_RESULT_BYTES', parse: positiveInt },
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
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const s = settings.find((x) => x.flag === name);
    if (!s) throw new ConfigError(`unknown flag '${name}' (known: ${settings.filter((x) => x.flag).map((x) => x.flag).join(', ')})`);
    const raw = inline ?? argv[++i];
    if (raw === undefined) throw new ConfigError(`${name}: missing value`);
    assign(s.key, s.parse(raw, name));
  }
  return config;
}

export const usage = `redstate: a Restate-compatible durable-execution server

flags (environment variable in brackets):
  --ingress-port N        ingress port (REDSTATE_INGRESS_PORT, 8080)
  --admin-port N          admin port (REDSTATE_ADMIN_PORT, 9070)
  --host ADDR             bind address (REDSTATE_HOST, 0.0.0.0)
  --redis-url URL         Redis store, e.g. redis://127.0.0.1:6379 (REDSTATE_REDIS_URL; unset = embedded store)
  --data-dir DIR          embedded store directory (REDSTATE_DATA_DIR, ./.redstate)
  --request-size-limit N  ingress body limit in bytes (REDSTATE_REQUEST_SIZE_LIMIT, 32 MiB)
  REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES, REDSTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7 (true/false)
  --ingress-host ADDR     ingress bind address (REDSTATE_INGRESS_HOST, the --host value)
  --admin-host ADDR       admin bind address (REDSTATE_ADMIN_HOST, the --host value)
  --redis-tls-ca-file F, --redis-tls-cert-file F, --redis-tls-key-file F
                          PEM files for rediss:// (REDSTATE_REDIS_TLS_CA_FILE, _CERT_FILE, _KEY_FILE)
  --request-identity-private-key-pem-file F
                          sign requests to deployments with this Ed25519 key
                          (REDSTATE_REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE)
  --auth-tokens-file F    bearer tokens, lines of 'admin|ingress|any <token>' (REDSTATE_AUTH_TOKENS_FILE)
  REDSTATE_ADMIN_TOKEN, REDSTATE_INGRESS_TOKEN
                          a bearer token each port requires (environment only)
  REDSTATE_QUERY_TIMEOUT_MS (30000), REDSTATE_QUERY_MEMORY_LIMIT_MB (256),
  REDSTATE_QUERY_MAX_ROWS (100000), REDSTATE_QUERY_MAX_RESULT_BYTES (32 MiB)
                          limits of one /query request
`;
