/**
 * docs/architecture.md is the map a newcomer reads to find the one file that owns a behaviour:
 * every source file outside the web UI must be named in it by its path from the checkout's
 * root (src/…, machines/…). A file added without a line in the map fails here.
 */
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(projectRoot(), dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return rel === 'src/ui' ? [] : sourceFiles(rel);
    return entry.name.endsWith('.ts') ? [rel] : [];
  });
}

test('every source file outside the web UI is named in docs/architecture.md', (t) => {
  const map = readFileSync(path.join(projectRoot(), 'docs', 'architecture.md'), 'utf8');
  const files = [...sourceFiles('src'), ...sourceFiles('machines')];
  t.true(files.length > 100, `found ${files.length} source files`);
  const unnamed = files.filter((file) => !map.includes(file));
  t.deepEqual(unnamed, [], 'give each a row in the map (docs/architecture.md, "The map")');
});
