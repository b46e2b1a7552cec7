// Replays the Dockerfile outside a container, for machines without a container engine (CI):
// each stage gets a directory standing for its filesystem, COPY copies into it (from the build
// context, honouring .dockerignore, or from an earlier stage), ENV and WORKDIR apply, and the
// RUN commands of the build stages run as written, on the Node version of the `node:` image they
// are built on (the replay refuses another). Then the final stage's CMD starts, on free
// ports, until its HEALTHCHECK command succeeds, and it must stop cleanly on SIGTERM.
//
// What cannot run outside a container is said, not faked: the final stage's RUN lines (they set
// up the image's own filesystem, e.g. the volume's owner) and USER are listed and skipped.
//
//   node scripts/replay-dockerfile.mjs [Dockerfile]
//
// It uses nothing of the checkout but what the Dockerfile copies (never its dist/ or
// node_modules/), in a temporary directory it removes at the end.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DockerfileParser } from 'dockerfile-ast';
import { freePort } from './free-port.mjs';

const context = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dockerfile = path.resolve(context, process.argv[2] ?? 'Dockerfile');
const sandbox = mkdtempSync(path.join(tmpdir(), 'redstate-image-'));
const say = (line) => process.stdout.write(`replay: ${line}\n`);

/** .dockerignore, as far as this project uses it: `**\/name` at any depth, `name` or `*.ext` at the top. */
function ignoredByDockerignore() {
  const file = path.join(context, '.dockerignore');
  const patterns = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'))
    : [];
  const tests = patterns.map((p) => {
    if (p.startsWith('**/') && !/[*?[]/.test(p.slice(3))) return (rel) => rel.split('/').includes(p.slice(3));
    if (/^\*\.[^/*?[]+$/.test(p)) return (rel) => !rel.includes('/') && rel.endsWith(p.slice(1));
    if (!/[*?[/]/.test(p)) return (rel) => rel === p || rel.startsWith(`${p}/`);
    throw new Error(
      `.dockerignore pattern '${p}' is not understood by ${path.basename(fileURLToPath(import.meta.url))}`,
    );
  });
  return (rel) => tests.some((t) => t(rel));
}

const ignored = ignoredByDockerignore();

class Stage {
  constructor(index, name) {
    this.index = index;
    this.name = name;
    this.root = path.join(sandbox, `stage-${index}`);
    this.workdir = '/';
    this.env = {};
    this.cmd = undefined;
    this.healthcheck = undefined;
    mkdirSync(this.root, { recursive: true });
  }

  /** A container path (absolute, or relative to WORKDIR) as a path in this stage's directory. */
  host(containerPath) {
    return path.join(this.root, path.posix.resolve(this.workdir, containerPath));
  }
}

function copy(stage, args, from) {
  const sources = args.slice(0, -1);
  const dest = args.at(-1);
  for (const source of sources) {
    const src = from ? from.host(source) : path.join(context, source);
    if (!existsSync(src))
      throw new Error(
        `COPY ${source}: not found${from ? ` in stage ${from.name ?? from.index}` : ' in the build context'}`,
      );
    // COPY of a file into a directory target keeps its name; a directory's contents are copied.
    const target =
      dest.endsWith('/') && !statSync(src).isDirectory()
        ? path.join(stage.host(dest), path.basename(source))
        : stage.host(dest);
    const filter = from ? undefined : (p) => !ignored(path.relative(context, p).split(path.sep).join('/'));
    cpSync(src, target, { recursive: true, filter, verbatimSymlinks: true });
  }
}

/** A stage on the official `node:<major>…` image is replayed on that major version of Node only. */
function checkNodeOf(image, tag) {
  const major = image === 'node' ? /^(\d+)/.exec(tag ?? '')?.[1] : undefined;
  if (major !== undefined && process.versions.node.split('.')[0] !== major) {
    throw new Error(
      `the image runs Node ${major}, this replay runs on ${process.version}: run the replay on Node ${major}`,
    );
  }
}

function run(stage, command) {
  say(`RUN ${command}   (in ${stage.workdir})`);
  const r = spawnSync('sh', ['-c', command], {
    cwd: stage.host('.'),
    env: { ...process.env, ...stage.env },
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error(`RUN ${command}: exit ${r.status}`);
}

/** ENV values that are container paths point into the stage's directory. */
function runtimeEnv(stage) {
  const env = {};
  for (const [k, v] of Object.entries(stage.env)) env[k] = v.startsWith('/') ? stage.host(v) : v;
  return env;
}

function durationMs(text) {
  const m = /^(\d+)(ms|s|m)$/.exec(text ?? '');
  if (!m) return 30_000;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2]];
}

async function start(stage) {
  if (!stage.cmd) throw new Error('the final stage has no CMD');
  if (!stage.healthcheck) throw new Error('the final stage has no HEALTHCHECK');
  // Free ports instead of 8080/9070/5122, which another process on this machine may hold.
  const ports = {
    REDSTATE_INGRESS_PORT: await freePort(),
    REDSTATE_ADMIN_PORT: await freePort(),
    REDSTATE_NODE_PORT: await freePort(),
  };
  const env = {
    ...process.env,
    ...runtimeEnv(stage),
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
  };
  mkdirSync(env.REDSTATE_DATA_DIR ?? stage.host('.'), { recursive: true });
  say(`CMD ${JSON.stringify(stage.cmd)}   (ports ${Object.values(ports).join(', ')})`);
  const started = Date.now();
  const server = spawn(stage.cmd[0], stage.cmd.slice(1), {
    cwd: stage.host('.'),
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })));
  try {
    const deadline = started + durationMs(stage.healthcheck.flags['start-period']) + 30_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`CMD exited with ${server.exitCode} before it was healthy`);
      const check = spawnSync(stage.healthcheck.cmd[0], stage.healthcheck.cmd.slice(1), {
        cwd: stage.host('.'),
        env,
        timeout: durationMs(stage.healthcheck.flags.timeout),
      });
      if (check.status === 0) break;
      if (Date.now() > deadline) throw new Error('HEALTHCHECK never passed');
      await new Promise((r) => setTimeout(r, 100));
    }
    say(`HEALTHCHECK passed ${Date.now() - started} ms after start`);
  } finally {
    if (server.exitCode === null) server.kill('SIGTERM');
  }
  const { code, signal } = await exited;
  if (code !== 0) throw new Error(`CMD stopped with ${code ?? signal} on SIGTERM`);
  say('CMD stopped cleanly on SIGTERM');
}

/**
 * The image holds production dependencies only: a dev dependency may be there only because a
 * production dependency needs it too (koa-body depends on @types/koa, for one).
 */
function checkProductionOnly(stage) {
  const pkg = JSON.parse(readFileSync(stage.host('package.json'), 'utf8'));
  const present = Object.keys(pkg.devDependencies ?? {}).filter((name) =>
    existsSync(stage.host(`node_modules/${name}`)),
  );
  const ls = spawnSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: stage.host('.'), encoding: 'utf8' });
  const production = new Set(
    ls.stdout.split('\n').map((p) => path.relative(stage.host('node_modules'), p).split(path.sep).join('/')),
  );
  const devOnly = present.filter((name) => !production.has(name));
  if (devOnly.length > 0) throw new Error(`dev dependencies in the image: ${devOnly.join(', ')}`);
  const size = (dir) => spawnSync('du', ['-sh', dir], { encoding: 'utf8' }).stdout.split('\t')[0];
  const [app, modules] = [size(stage.host('.')), size(stage.host('node_modules'))];
  const shared = present.length > 0 ? ` (${present.join(', ')}: also production dependencies of dependencies)` : '';
  say(`final stage: ${app} in ${stage.workdir}, node_modules ${modules}; no dev-only dependency${shared}`);
}

async function main() {
  const instructions = DockerfileParser.parse(readFileSync(dockerfile, 'utf8')).getInstructions();
  const stages = [];
  const finalIndex = instructions.filter((i) => i.getKeyword() === 'FROM').length - 1;
  let stage;
  for (const ins of instructions) {
    const keyword = ins.getKeyword();
    const args = ins.getArguments().map((a) => a.getValue());
    const flags = Object.fromEntries((ins.getFlags?.() ?? []).map((f) => [f.getName(), f.getValue()]));
    if (keyword === 'FROM') {
      stage = new Stage(stages.length, ins.getBuildStage());
      stages.push(stage);
      say(`FROM ${ins.getArgumentsContent()}`);
      checkNodeOf(ins.getImageName(), ins.getImageTag());
      continue;
    }
    if (!stage) throw new Error(`${keyword} before FROM`);
    const final = stage.index === finalIndex;
    switch (keyword) {
      case 'ARG':
      case 'EXPOSE':
      case 'VOLUME':
        break;
      case 'WORKDIR':
        stage.workdir = path.posix.resolve(stage.workdir, args[0]);
        mkdirSync(stage.host('.'), { recursive: true });
        break;
      case 'ENV':
        for (const p of ins.getProperties()) stage.env[p.getName()] = p.getValue() ?? '';
        break;
      case 'COPY': {
        const from =
          flags.from === undefined
            ? undefined
            : stages.find((s) => s.name === flags.from || String(s.index) === flags.from);
        if (flags.from !== undefined && !from) throw new Error(`COPY --from=${flags.from}: no such stage`);
        copy(stage, args, from);
        break;
      }
      case 'RUN':
        if (final) say(`skipped (image setup, needs the container's filesystem): RUN ${ins.getArgumentsContent()}`);
        else run(stage, ins.getArgumentsContent());
        break;
      case 'USER':
        say(`skipped: USER ${args[0]} (the replay runs as ${process.env.USER ?? 'the current user'})`);
        break;
      case 'CMD':
        stage.cmd = ins.getJSONStrings().map((j) => j.getJSONValue());
        break;
      case 'HEALTHCHECK': {
        const content = ins.getArgumentsContent().replace(/^(--\S+\s+)*/, '');
        if (!content.startsWith('CMD [')) throw new Error('HEALTHCHECK must be CMD in exec form');
        stage.healthcheck = { cmd: JSON.parse(content.slice(4)), flags };
        break;
      }
      default:
        throw new Error(`${keyword} is not replayed: extend ${path.basename(fileURLToPath(import.meta.url))}`);
    }
  }
  checkProductionOnly(stage);
  await start(stage);
}

try {
  await main();
  say('ok');
} catch (err) {
  say(`FAILED: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  rmSync(sandbox, { recursive: true, force: true });
}
