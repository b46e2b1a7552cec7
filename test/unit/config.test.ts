/** Configuration from flags and environment; bad values fail at start with one line. */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig, settings, settingsMarkdown } from '../../src/config.js';

test('defaults', (t) => {
  const c = loadConfig({}, []);
  t.is(c.ingressPort, 8080);
  t.is(c.adminPort, 9070);
  t.is(c.redisUrl, undefined);
  t.is(c.dataDir, './.redstate');
  t.false(c.enableVqueues);
  t.false(c.enableProtocolV7);
  t.is(c.nodePort, 5122);
  t.is(c.logFormat, undefined);
  t.is(c.logLevel, 'info');
  t.is(c.tracingEndpoint, undefined);
});

test('environment, then flags override it', (t) => {
  const env = {
    REDSTATE_INGRESS_PORT: '18080',
    REDSTATE_ADMIN_PORT: '19070',
    REDSTATE_REDIS_URL: 'redis://127.0.0.1:6400',
    REDSTATE_DATA_DIR: '/tmp/x',
    REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES: 'true',
    REDSTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7: '1',
  };
  const c = loadConfig(env, ['--ingress-port', '28080', '--data-dir=/tmp/y']);
  t.is(c.ingressPort, 28080);
  t.is(c.adminPort, 19070);
  t.is(c.redisUrl, 'redis://127.0.0.1:6400');
  t.is(c.dataDir, '/tmp/y');
  t.true(c.enableVqueues);
  t.true(c.enableProtocolV7);
});

test('telemetry settings', (t) => {
  const c = loadConfig(
    { REDSTATE_LOG_FORMAT: 'JSON', REDSTATE_LOG_LEVEL: 'warn', REDSTATE_TRACING_ENDPOINT: 'http://127.0.0.1:4318' },
    ['--node-port', '0'],
  );
  t.is(c.logFormat, 'json');
  t.is(c.logLevel, 'warn');
  t.is(c.tracingEndpoint, 'http://127.0.0.1:4318');
  t.is(c.nodePort, 0);
});

test('bad values are refused with a message naming the setting', (t) => {
  const bad: Array<[NodeJS.ProcessEnv, string[], RegExp]> = [
    [{ REDSTATE_INGRESS_PORT: 'abc' }, [], /REDSTATE_INGRESS_PORT: 'abc' is not a port/],
    [{}, ['--admin-port', '70000'], /--admin-port: '70000' is not a port/],
    [{ REDSTATE_REDIS_URL: 'http://x' }, [], /must start with redis:\/\//],
    [{ REDSTATE_EXPERIMENTAL_ENABLE_VQUEUES: 'maybe' }, [], /is not a boolean/],
    [{}, ['--bogus', '1'], /unknown flag '--bogus'/],
    [{}, ['--data-dir'], /--data-dir: missing value/],
    [{ REDSTATE_LOG_FORMAT: 'xml' }, [], /REDSTATE_LOG_FORMAT: 'xml' is not one of json, pretty/],
    [{ REDSTATE_LOG_LEVEL: 'loud' }, [], /is not one of fatal, error/],
    [{ REDSTATE_TRACING_ENDPOINT: 'localhost:4318' }, [], /must start with http:\/\/ or https:\/\//],
  ];
  for (const [env, argv, message] of bad) {
    const err = t.throws(() => loadConfig(env, argv), { instanceOf: ConfigError });
    t.regex(err!.message, message);
  }
});

test('the server exits with one line on a bad setting', (t) => {
  const r = spawnSync(process.execPath, ['dist/src/main.js', '--ingress-port', 'abc'], { encoding: 'utf8' });
  t.is(r.status, 2);
  t.is(r.stderr, "redstate: --ingress-port: 'abc' is not a port number (0-65535)\n");
});

test('--help lists every setting with its flag, environment variable and default', (t) => {
  const r = spawnSync(process.execPath, ['dist/src/main.js', '--help'], { encoding: 'utf8' });
  t.is(r.status, 0);
  for (const s of settings) {
    if (s.flag) {
      t.true(r.stdout.includes(`${s.flag} ${s.arg}`), s.flag);
      t.true(r.stdout.includes(`[${s.env}, default: `), s.env);
    } else {
      // Secrets have no flag: flags show in `ps`.
      t.true(r.stdout.includes(`${s.env}=${s.arg}   [environment only, default: `), s.env);
    }
  }
  t.true(r.stdout.includes('REDSTATE_PARTITIONS'));
});

test("README's settings table is the one generated from src/config.ts", (t) => {
  const readme = readFileSync('README.md', 'utf8');
  t.true(
    readme.includes(settingsMarkdown()),
    'README.md is out of date: run `npm run build && npm run readme:settings`',
  );
});
