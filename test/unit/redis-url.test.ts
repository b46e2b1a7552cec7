/**
 * The forms `REDSTATE_REDIS_URL` takes (src/redis-url.ts): one Redis as ioredis reads it, a
 * Redis Cluster by `redis-cluster://` seeds or by several `redis://` URLs; bad ones are refused
 * with a message that names the forms and never shows a password.
 */
import test from 'ava';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseRedisUrl, withoutPassword } from '../../src/redis-url.js';

test('one Redis is passed on as written', (t) => {
  t.deepEqual(parseRedisUrl('redis://:pw@127.0.0.1:6400/2'), {
    kind: 'single',
    url: 'redis://:pw@127.0.0.1:6400/2',
    tls: false,
  });
  t.deepEqual(parseRedisUrl('rediss://redis.example'), { kind: 'single', url: 'rediss://redis.example', tls: true });
});

test('redis-cluster:// lists seeds, with credentials, TLS and default ports', (t) => {
  t.deepEqual(parseRedisUrl('redis-cluster://10.0.0.1:7000,10.0.0.2:7001,[::1]'), {
    kind: 'cluster',
    seeds: [
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 6379 },
    ],
    tls: false,
  });
  t.deepEqual(parseRedisUrl('rediss-cluster://app:p%40ss@a:1,b:2/0'), {
    kind: 'cluster',
    seeds: [
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
    ],
    tls: true,
    username: 'app',
    password: 'p@ss',
  });
});

test('several redis:// URLs are the seeds of one cluster', (t) => {
  t.deepEqual(parseRedisUrl('redis://:pw@h1:7000, redis://h2:7001'), {
    kind: 'cluster',
    seeds: [
      { host: 'h1', port: 7000 },
      { host: 'h2', port: 7001 },
    ],
    tls: false,
    password: 'pw',
  });
});

test("redis-sentinel:// lists the sentinels, then the primary's name; credentials are the primary's", (t) => {
  t.deepEqual(parseRedisUrl('redis-sentinel://h1:26379,h2/mymaster'), {
    kind: 'sentinel',
    sentinels: [
      { host: 'h1', port: 26379 },
      { host: 'h2', port: 26379 },
    ],
    name: 'mymaster',
    tls: false,
  });
  t.deepEqual(parseRedisUrl('rediss-sentinel://app:p%40ss@10.0.0.1:5000/my%20primary?sentinelPassword=s3'), {
    kind: 'sentinel',
    sentinels: [{ host: '10.0.0.1', port: 5000 }],
    name: 'my primary',
    tls: true,
    username: 'app',
    password: 'p@ss',
    sentinelPassword: 's3',
  });
  t.throws(() => parseRedisUrl('redis-sentinel://h1:26379,h2:26379'), { message: /must end with the primary's name/ });
  t.throws(() => parseRedisUrl('redis-sentinel://h1:26379/'), { message: /must end with the primary's name/ });
  t.throws(() => parseRedisUrl('redis-sentinel://,h2/m'), { message: /empty host/ });
  t.is(
    withoutPassword('redis-sentinel://:pw@h1:1,h2:2/m?sentinelPassword=s3'),
    'redis-sentinel://h1:1,h2:2/m?sentinelPassword=…',
  );
});

test('bad forms are refused, naming the accepted ones', (t) => {
  t.throws(() => parseRedisUrl('http://x'), { message: /must start with redis:\/\/, rediss:\/\/, redis-cluster:\/\// });
  t.throws(() => parseRedisUrl('redis-cluster://a:1,,b:2'), { message: /empty host/ });
  t.throws(() => parseRedisUrl('redis-cluster://:secret@a:1/3'), { message: /only database 0/ });
  t.throws(() => parseRedisUrl('redis-cluster://a:99999'), { message: /is not a URL/ });
  t.throws(() => parseRedisUrl('redis://a:1,rediss://b:2'), { message: /all be redis:\/\/ or all be rediss:\/\// });
  const err = t.throws(() => loadConfig({ REDSTATE_REDIS_URL: 'redis-cluster://:secret@a:1/3' }, []), {
    instanceOf: ConfigError,
  });
  t.regex(err!.message, /^REDSTATE_REDIS_URL: /);
  t.false(err!.message.includes('secret'));
  t.is(loadConfig({ REDSTATE_REDIS_URL: 'redis-cluster://a:1,b:2' }, []).redisUrl, 'redis-cluster://a:1,b:2');
});

test('passwords are dropped from what is logged, user names and seeds kept', (t) => {
  t.is(withoutPassword('redis://:pw@h:1'), 'redis://h:1');
  t.is(withoutPassword('redis://app:pw@h:1,redis://app:pw@h:2'), 'redis://app@h:1,redis://app@h:2');
  t.is(withoutPassword('redis-cluster://app:p,w@a:1,b:2'), 'redis-cluster://app@a:1,b:2');
});
