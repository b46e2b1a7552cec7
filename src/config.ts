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
  /** On SIGTERM, how long (ms) requests in flight may still be answered before connections are closed. */
  shutdownGrace: number;
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
  shutdownGrace: 10_000,
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
  { key: 'shutdownGrace', env: 'REDSTATE_SHUTDOWN_GRACE', flag: '--shutdown-grace', parse: positiveInt },
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
  --shutdown-grace MS     on SIGTERM, how long requests in flight may still be answered (REDSTATE_SHUTDOWN_GRACE, 10000)
  REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES, REDSTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7 (true/false)
`;
