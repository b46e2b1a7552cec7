/**
 * CLI entry: parse flags and environment, open the store, rehydrate, serve ingress and admin,
 * stop cleanly on SIGTERM/SIGINT.
 */
import { ConfigError, loadConfig, usage } from './config.js';
import { startServer } from './server.js';

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(usage);
    return;
  }
  let config;
  try {
    config = loadConfig(process.env, process.argv.slice(2));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`redstate: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const server = await startServer(config);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second signal: stop now. Every acknowledged commit is durable already.
      server.log.warn(`${signal} received again, exiting at once`);
      process.exit(1);
    }
    stopping = true;
    server.log.info(`${signal} received, stopping (requests in flight have ${config.shutdownGrace} ms)`);
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`redstate: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
