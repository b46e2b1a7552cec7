/**
 * Builds the web UI into dist/ui/, served by src/admin/ui.ts under /ui/ on the admin port.
 * `npm run dev:ui` serves it with hot reload and sends API calls to a redstate on :9070.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { machineLayouts } from './build/layouts-plugin.ts';
import { precompress } from './build/precompress-plugin.ts';

const admin = process.env.REDSTATE_ADMIN_URL ?? 'http://127.0.0.1:9070';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/ui/',
  plugins: [machineLayouts(), precompress()],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: true,
  },
  server: {
    proxy: Object.fromEntries(
      ['/query', '/events', '/deployments', '/services', '/invocations', '/version', '/health'].map((p) => [p, admin]),
    ),
  },
});
