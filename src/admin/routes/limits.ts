/**
 * `/limits/rules` and `/vqueues/{id}/pause|resume` (reference-behavior.md §3.8).
 *
 * Rules are stored (registry document) and listed by `sys_rules`; the runtime does not
 * enforce them yet. Pause/resume answer 202 for every well-formed id, known or not, as the
 * reference does; this server keeps no virtual queues, so they change nothing.
 */
import type Router from '@koa/router';
import { deleteRules, upsertRules, type LimitRule } from '../../registry/extras.js';
import type { Registry } from '../../registry/registry.js';
import { decodeDeleteRules, decodeUpsertRules, vqueueParam } from '../extras-requests.js';
import { readJsonBody, sendEmpty, sendJson } from '../http-io.js';

const ruleView = (r: LimitRule) => ({
  pattern: r.pattern,
  limits: r.concurrency === undefined ? {} : { concurrency: r.concurrency },
  description: r.description,
  disabled: r.disabled,
  version: r.version,
  last_modified_millis_since_epoch: r.lastModified,
});

export function limitRoutes(router: Router, registry: Registry): void {
  router.put('/limits/rules', async (ctx) => {
    const changes = decodeUpsertRules(readJsonBody(ctx));
    const rules = await registry.changeExtras((x) => upsertRules(x, changes, Date.now()));
    sendJson(ctx, 200, rules.map(ruleView));
  });

  router.post('/limits/rules/bulk-delete', async (ctx) => {
    const deletes = decodeDeleteRules(readJsonBody(ctx));
    sendJson(ctx, 200, await registry.changeExtras((x) => deleteRules(x, deletes)));
  });

  for (const action of ['pause', 'resume']) {
    router.post(`/vqueues/:vqueue/${action}`, (ctx) => {
      vqueueParam(ctx.params['vqueue'] ?? '');
      sendEmpty(ctx, 202);
    });
  }
}
