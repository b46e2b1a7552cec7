/**
 * Runs a Restate SDK endpoint (a `.mjs` file using `@restatedev/restate-sdk`) as a child
 * process for tests: `node --import poly.mjs <file>` with the port in `PORT`, resolved once
 * the port accepts connections.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';

/** The checkout root (src/project-root.ts), for the tests that find files from it. */
export { projectRoot };

export interface StartedService {
  port: number;
  /** `http://127.0.0.1:<port>/` */
  url: string;
  stop(): Promise<void>;
  proc: ChildProcess;
  /** The counters server of services that keep counters (services/serve.mjs). */
  countsPort?: number;
}

/** A file under `test/support/` of the checkout, e.g. `services/basic.mjs`. */
export function supportFile(relative: string): string {
  return path.join(projectRoot(), 'test', 'support', relative);
}

const START_TIMEOUT_MS = 15_000;

/**
 * Starts `file` (absolute, or relative to the checkout root, or to `test/support/services/`).
 * Output is kept and shown only if the process fails to start.
 */
export async function startService(file: string, opts: { env?: Record<string, string> } = {}): Promise<StartedService> {
  const root = projectRoot();
  const candidates = path.isAbsolute(file) ? [file] : [path.join(root, file), supportFile(path.join('services', file))];
  const script = candidates.find((c) => existsSync(c));
  if (!script) throw new Error(`service file not found: ${candidates.join(' or ')}`);
  const proc = spawn(process.execPath, ['--import', supportFile('poly.mjs'), script], {
    cwd: root,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) =>
    proc.once('exit', (code) => {
      exited = code;
      resolve();
    }),
  );

  // The service picks its own ports and prints them (services/serve.mjs).
  const deadline = Date.now() + START_TIMEOUT_MS;
  let port: number | undefined;
  while (port === undefined) {
    port = Number(/^READY (\d+)$/m.exec(output)?.[1]) || undefined;
    if (port !== undefined) break;
    if (exited !== undefined || Date.now() > deadline) {
      proc.kill('SIGKILL');
      const why = exited !== undefined ? `exited with ${exited}` : `did not listen within ${START_TIMEOUT_MS} ms`;
      throw new Error(`${path.basename(script)} ${why}\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const countsPort = Number(/^COUNTS (\d+)$/m.exec(output)?.[1]) || undefined;

  const stop = async () => {
    if (exited !== undefined) return;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 3_000);
    await exit;
    clearTimeout(timer);
  };
  return { port, url: `http://127.0.0.1:${port}/`, stop, proc, ...(countsPort ? { countsPort } : {}) };
}
