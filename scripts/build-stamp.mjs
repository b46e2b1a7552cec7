// Builds only when something changed, so `npm start` on a built tree starts at once.
//
//   node scripts/build-stamp.mjs write    after a successful `npm run build` (its postbuild)
//   node scripts/build-stamp.mjs ensure   `npm run build` if a source is newer than that stamp
//                                         (prepare, prestart, pretest)
//   node scripts/build-stamp.mjs fresh    exit 0 when the build is up to date, 1 when not
//
// Sources are every file under src/, machines/ and test/ plus package.json, package-lock.json
// and tsconfig.json: whatever `npm run build` reads, including what others add to it later
// under src/ (the web UI's front end).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const SOURCE_DIRS = ['src', 'machines', 'test'];
const SOURCE_FILES = ['package.json', 'package-lock.json', 'tsconfig.json'];

function newestIn(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestIn(full) : statSync(full).mtimeMs);
  }
  return newest;
}

function newestSource() {
  let newest = 0;
  for (const dir of SOURCE_DIRS)
    if (existsSync(path.join(root, dir))) newest = Math.max(newest, newestIn(path.join(root, dir)));
  for (const file of SOURCE_FILES)
    if (existsSync(path.join(root, file))) newest = Math.max(newest, statSync(path.join(root, file)).mtimeMs);
  return newest;
}

function isFresh() {
  return existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource();
}

function ensure() {
  if (isFresh()) return 0;
  if (!existsSync(path.join(root, 'node_modules', 'typescript'))) {
    process.stderr.write(
      'redstate: dist/ is missing or older than the sources, and TypeScript is not installed (dev dependencies omitted?): run `npm ci`, then `npm run build`\n',
    );
    return 1;
  }
  process.stderr.write('redstate: sources changed since the last build: npm run build\n');
  return (
    spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' }).status ?? 1
  );
}

function write() {
  mkdirSync(path.dirname(stamp), { recursive: true });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  return 0;
}

const modes = { ensure, write, fresh: () => (isFresh() ? 0 : 1) };
const mode = modes[process.argv[2]];
if (!mode) {
  process.stderr.write('usage: node scripts/build-stamp.mjs ensure|write|fresh\n');
  process.exit(2);
}
process.exit(mode());
