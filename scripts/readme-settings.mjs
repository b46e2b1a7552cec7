// Rewrites README.md's settings table from the settings table in src/config.ts (built into
// dist/). test/unit/config.test.ts fails when README and src/config.ts disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { settingsMarkdown } from '../dist/src/config.js';

const readme = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
const text = readFileSync(readme, 'utf8');
const table = /(<!-- settings:begin[^>]*-->\n)[\s\S]*?(<!-- settings:end -->)/;
if (!table.test(text)) {
  process.stderr.write('README.md has no <!-- settings:begin --> … <!-- settings:end --> markers\n');
  process.exit(1);
}
writeFileSync(readme, text.replace(table, `$1${settingsMarkdown()}\n$2`));
