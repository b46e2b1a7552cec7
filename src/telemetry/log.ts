/**
 * Log lines: pino, as JSON lines (one object a line, for collectors) or pretty (for a person at
 * a terminal). main.ts builds the root logger from the config and hands it down; every layer
 * logs through the `Logger` it was given, and child loggers carry Restate's field names, so a
 * query written against Restate's logs finds the same fields here.
 */
import { pino, type DestinationStream, type LoggerOptions } from 'pino';
import type { LogFormat, LogLevel } from '../config.js';

export type Logger = pino.Logger;

/** Field names as Restate's logs and spans spell them (OpenTelemetry conventions where one exists). */
export const LogField = {
  invocationId: 'restate.invocation.id',
  invocationTarget: 'restate.invocation.target',
  rpcService: 'rpc.service',
  rpcMethod: 'rpc.method',
  deploymentId: 'restate.deployment.id',
  deploymentAddress: 'restate.deployment.address',
  errorCode: 'restate.error.code',
  /** An expected failure's message (no stack: the code path is known). */
  errorMessage: 'error.message',
  httpMethod: 'http.request.method',
  httpStatus: 'http.response.status_code',
  urlPath: 'url.path',
} as const;

export interface LogOptions {
  /** Unset: pretty when stdout is a terminal, JSON otherwise. */
  format: LogFormat | undefined;
  level: LogLevel;
  /** Where JSON lines go; default stdout, written synchronously so a crash loses no line. */
  destination?: DestinationStream;
}

const base: LoggerOptions = {
  timestamp: pino.stdTimeFunctions.isoTime,
  // `hostname` repeats on every line and says nothing a collector does not already know.
  base: { pid: process.pid },
};

/**
 * The root logger. pino-pretty is imported only for the pretty format, so JSON output (every
 * container, every CI run) never loads it.
 */
export async function createLogger(opts: LogOptions): Promise<Logger> {
  const format = opts.format ?? (process.stdout.isTTY ? 'pretty' : 'json');
  if (format === 'pretty') {
    const { default: pretty } = await import('pino-pretty');
    return pino(
      { ...base, level: opts.level },
      pretty({ sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' }),
    );
  }
  return pino(
    // Level names, not pino's numbers: collectors and people filter on "error", as in Restate's JSON.
    { ...base, level: opts.level, formatters: { level: (label) => ({ level: label }) } },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** Drops every line: for code run in-process without a server around it (tests, tools). */
export const silentLogger: Logger = pino({ level: 'silent' });

/** What identifies an invocation target in log lines and spans. */
export interface TargetFields {
  service: string;
  handler: string;
  key?: string;
}

/** `Greeter/greet` or `Counter/key/add`, as Restate writes `restate.invocation.target`. */
export function targetName(target: TargetFields): string {
  return target.key === undefined
    ? `${target.service}/${target.handler}`
    : `${target.service}/${target.key}/${target.handler}`;
}

/** The fields of one invocation, for `log.child(invocationFields(...))`. */
export function invocationFields(invocationId: string, target: TargetFields): Record<string, string> {
  return {
    [LogField.invocationId]: invocationId,
    [LogField.invocationTarget]: targetName(target),
    [LogField.rpcService]: target.service,
    [LogField.rpcMethod]: target.handler,
  };
}
