/**
 * CLI entry: parse flags and environment, build the logger, open the store, rehydrate, serve
 * ingress, admin and node ports, stop cleanly on SIGTERM/SIGINT. `--help` and a bad setting
 * answer before anything heavy is loaded (the server's modules are imported afterwards).
 */
import { ConfigError, loadConfig, usage, type Config } from './config.js';

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(usage());
    return;
  }
  let config: Config;
  try {
    config = loadConfig(process.env, process.argv.slice(2));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`redstate: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const { createLogger } = await import('./telemetry/log.js');
  const root = await createLogger({ format: config.logFormat, level: config.logLevel });
  const { exitWithPrimary, runPrimary, workerConfig, workerIndex, reportWorkerReady } = await import('./workers.js');
  const worker = config.workers > 1 ? workerIndex() : undefined;
  if (worker !== undefined) exitWithPrimary();
  const log = worker === undefined ? root : root.child({ worker });
  try {
    if (config.workers > 1 && worker === undefined) {
      await runPrimary(config, log);
      process.exit(0);
    }
    const { startServer } = await import('./server.js');
    const server = await startServer(worker === undefined ? config : workerConfig(config, worker), log, worker);
    if (worker !== undefined)
      reportWorkerReady({ ingress: server.ingressPort, admin: server.adminPort, node: server.nodePort });
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        // A second signal: stop now. Every acknowledged commit is durable already.
        log.warn({ signal }, `${signal} received again, exiting at once`);
        process.exit(1);
      }
      stopping = true;
      log.info({ signal, grace_ms: config.shutdownGrace }, `${signal} received, stopping`);
      server.stop().then(
        () => process.exit(0),
        (err: unknown) => {
          log.error({ err }, 'stop failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    log.fatal({ err }, `failed to start: ${reason}`);
    // Also one plain line where a person starting it looks, whatever the log format.
    process.stderr.write(`redstate: failed to start: ${reason}\n`);
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`redstate: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
