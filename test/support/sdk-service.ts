/**
 * Runs a Restate SDK endpoint (a `.mjs` file using `@restatedev/restate-sdk`) as a child
 * process for tests: `node --import poly.mjs <file>` with the port in `PORT`, resolved once
 * the port accepts connections.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { freePort, retryIfPortTaken } from './ports.js';

/** The checkout root (src/project-root.ts), for the tests that find files from it. */
export { projectRoot };

export interface StartedService {
  port: number;
  /** `http://127.0.0.1:<port>/` */
  url: string;
  stop(): Promise<void>;
  /** SIGKILL, as in a crash. */
  kill(): Promise<void>;
  /** Starts the file again, on the same port, after `kill`. */
  restart(): Promise<void>;
  /** The running process (a new one after `restart`). */
  readonly proc: ChildProcess;
  /** The counters server of services that keep counters (services/serve.mjs). */
  readonly countsPort: number | undefined;
}

/** A file under `test/support/` of the checkout, e.g. `services/basic.mjs`. */
export function supportFile(relative: string): string {
  return path.join(projectRoot(), 'test', 'support', relative);
}

const START_TIMEOUT_MS = 15_000;

interface Launched {
  proc: ChildProcess;
  port: number;
  countsPort: number | undefined;
  /** Resolves when the process has exited. */
  exit: Promise<void>;
  exited(): boolean;
}

/**
 * Starts `file` (absolute, or relative to the checkout root, or to `test/support/services/`).
 * Output is kept and shown only if the process fails to start.
 */
export async function startService(file: string, opts: { env?: Record<string, string> } = {}): Promise<StartedService> {
  const root = projectRoot();
  const candidates = path.isAbsolute(file) ? [file] : [path.join(root, file), supportFile(path.join('services', file))];
  const script = candidates.find((c) => existsSync(c));
  if (!script) throw new Error(`service file not found: ${candidates.join(' or ')}`);
  // A port below 32768 (./ports.ts), where a restart finds it free again.
  const env = opts.env ?? {};
  let current = await retryIfPortTaken(async () =>
    launch(root, script, { ...env, PORT: env.PORT ?? String(await freePort()) }),
  );
  const port = current.port;
  const terminate = async (signal: NodeJS.Signals) => {
    if (current.exited()) return;
    current.proc.kill(signal);
    const timer = signal === 'SIGKILL' ? undefined : setTimeout(() => current.proc.kill('SIGKILL'), 3_000);
    await current.exit;
    clearTimeout(timer);
  };
  return {
    port,
    url: `http://127.0.0.1:${port}/`,
    get proc() {
      return current.proc;
    },
    get countsPort() {
      return current.countsPort;
    },
    stop: () => terminate('SIGTERM'),
    kill: () => terminate('SIGKILL'),
    async restart() {
      // The same address, so the registered deployment reaches the new process.
      current = await launch(root, script, { ...opts.env, PORT: String(port) });
    },
  };
}

async function launch(root: string, script: string, env: Record<string, string>): Promise<Launched> {
  const proc = spawn(process.execPath, ['--import', supportFile('poly.mjs'), script], {
    cwd: root,
    env: { ...process.env, ...env },
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

  // The service prints the ports it listens on (services/serve.mjs).
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
  return { proc, port, countsPort, exit, exited: () => exited !== undefined };
}
