/**
 * Running the official `restate` CLI (npm `@restatedev/restate`) against a test stack: an
 * embedded-store server with two deployments (durable.mjs and objects.mjs), the CLI pointed
 * at it through its environment, with its own config home and no colours.
 */
import type { TestFn } from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { startService, type StartedService } from './sdk-service.js';
import { startStack, type Stack } from './stack.js';

export interface CliWorld {
  stack: Stack;
  objects: StartedService;
  /** The second deployment's id (objects.mjs). */
  objectsDeployment: string;
  configHome: string;
}

export interface Run {
  code: number;
  /** stdout and stderr, without colours. */
  out: string;
}

const CLI = path.join(projectRoot(), 'node_modules', '.bin', 'restate');

/**
 * What a CLI run needs: the server, a config home, and any environment of its own (`EDITOR`,
 * `HOME`); a variable given as undefined is left out (the CLI then reads its config file).
 */
export type CliTarget = Pick<CliWorld, 'stack' | 'configHome'> & { env?: Record<string, string | undefined> };

export function restate(w: CliTarget, ...args: string[]): Promise<Run> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    RESTATE_ADMIN_URL: w.stack.server.admin,
    RESTATE_INGRESS_URL: w.stack.server.ingress,
    RESTATE_CLI_CONFIG_HOME: w.configHome,
    NO_COLOR: '1',
    COLUMNS: '200',
    ...w.env,
  };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  return new Promise((resolve) => {
    execFile(
      CLI,
      args,
      {
        env,
        timeout: 30_000,
      },
      (err, stdout, stderr) => {
        const out = `${stdout}\n${stderr}`.replace(/\u001b\[[0-9;]*m/g, '');
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out });
      },
    );
  });
}

/** Starts the CLI world before a test file's tests and stops it after them. */
export function cliWorld(test: TestFn<CliWorld>): void {
  test.before(async (t) => {
    const stack = await startStack('embedded');
    const objects = await startService('objects.mjs');
    const res = await stack.admin.post('deployments', { json: { uri: objects.url } });
    if (res.statusCode !== 201) throw new Error(`registration failed: ${res.statusCode} ${res.body}`);
    const configHome = await mkdtemp(path.join(tmpdir(), 'restate-cli-'));
    t.context = { stack, objects, objectsDeployment: (JSON.parse(res.body) as { id: string }).id, configHome };
  });
  test.after.always(async (t) => {
    await Promise.all([t.context.stack.stop(), t.context.objects.stop()]);
    await rm(t.context.configHome, { recursive: true, force: true });
  });
}
