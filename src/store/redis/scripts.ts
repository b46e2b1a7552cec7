/**
 * Finds the Lua sources. The build copies nothing into dist/, so both the compiled and the
 * source module read src/store/redis/lua/ of the checkout.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../project-root.js';

export function readLuaScript(name: string): string {
  return readFileSync(join(projectRoot(), 'src', 'store', 'redis', 'lua', name), 'utf8');
}
