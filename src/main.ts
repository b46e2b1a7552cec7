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
  const stop = (signal: string) => {
    server.log.info(`${signal} received, stopping`);
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`redstate: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
