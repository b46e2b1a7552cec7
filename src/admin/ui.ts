/**
 * Serves the web UI (src/ui/, built by `npm run build:ui` into dist/ui/) under `/ui/` on the
 * admin port. Every path under `/ui/` that is not a built file is a page of the single-page
 * app, so deep links (`/ui/invocations/inv_…`) load index.html and the app routes them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type Router from '@koa/router';
import send from 'koa-send';
import { AdminTextError } from './errors.js';
import { projectRoot } from '../project-root.js';
import { sendEmpty } from './http-io.js';

/** Built assets carry a content hash in their names: they never change under one URL. */
const ASSET_MAX_AGE_MS = 365 * 24 * 3600 * 1000;

export function uiRoutes(dir = join(projectRoot(), 'dist', 'ui')): (router: Router) => void {
  return (router) => {
    router.get('/ui{/*path}', async (ctx) => {
      // The router matches `/ui` and `/ui/` alike; relative asset URLs need the slash.
      if (ctx.path === '/ui') return sendEmpty(ctx, 308, { location: '/ui/' });
      if (!existsSync(join(dir, 'index.html'))) {
        throw new AdminTextError(503, 'The web UI is not built: run `npm run build` (or `npm run build:ui`).');
      }
      const file = ctx.path.slice('/ui/'.length);
      if (file.startsWith('assets/') && existsSync(join(dir, file))) {
        // Served as the `.gz` the build made when the browser accepts gzip.
        await send(ctx, file, { root: dir, maxage: ASSET_MAX_AGE_MS, immutable: true, gzip: true });
        return;
      }
      // The page itself must not be cached: it names the current assets.
      await send(ctx, 'index.html', { root: dir, setHeaders: (res) => res.setHeader('cache-control', 'no-cache') });
    });
  };
}
