/**
 * Captured data the tests compare against (test/fixtures/): the protocol exchanges between
 * restate-server 1.7.12 and the TypeScript SDK, and the reference's OpenAPI documents. They
 * live in the repository, so a clone runs its tests without anything beside it.
 */
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';

export function fixturePath(...parts: string[]): string {
  return path.join(projectRoot(), 'test', 'fixtures', ...parts);
}
