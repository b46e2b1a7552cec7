/**
 * The checkout's root: the directory holding package.json. Files that the build does not copy
 * into dist/ (Lua scripts, the built web UI) are found from there, whether the code runs from
 * src/ or from dist/src/.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function projectRoot(): string {
  const here = fileURLToPath(import.meta.url);
  let dir = dirname(here);
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${here}`);
    dir = parent;
  }
  return dir;
}
