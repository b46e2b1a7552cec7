/**
 * Emits a gzipped copy (`<file>.gz`) of each built script and style sheet, which the admin
 * server hands to browsers that accept gzip (koa-send, src/admin/ui.ts): compressed once at
 * build time instead of on every request.
 */
import { gzipSync } from 'node:zlib';
import type { Plugin } from 'vite';

export function precompress(): Plugin {
  return {
    name: 'precompress',
    apply: 'build',
    generateBundle(_options, bundle) {
      for (const [fileName, item] of Object.entries(bundle)) {
        if (!/\.(js|css)$/.test(fileName)) continue;
        const source = item.type === 'chunk' ? item.code : item.source;
        this.emitFile({ type: 'asset', fileName: `${fileName}.gz`, source: gzipSync(source, { level: 9 }) });
      }
    },
  };
}
