/**
 * Log lines as tests read them: a JSON logger that keeps its lines in memory (for apps run
 * in-process), and the JSON lines of a server process's output.
 */
import { createLogger, type Logger } from '../../src/telemetry/log.js';

export type LogLine = Record<string, unknown> & { level: string; msg: string };

export async function capturingLogger(): Promise<{ log: Logger; lines: LogLine[] }> {
  const lines: LogLine[] = [];
  const log = await createLogger({
    format: 'json',
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  return { log, lines };
}

/** Every line of `output` that is a JSON object (the server's log lines with REDSTATE_LOG_FORMAT=json). */
export function jsonLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}
