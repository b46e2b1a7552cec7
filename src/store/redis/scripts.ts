/**
 * Finds the Lua sources. The build copies nothing into dist/, so the compiled module
 * (dist/src/store/redis/) and the source module (src/store/redis/) both walk up to the
 * directory holding package.json and read src/store/redis/lua/ from there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function readLuaScript(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`Lua script ${name}: no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return readFileSync(join(dir, 'src', 'store', 'redis', 'lua', name), 'utf8');
}
