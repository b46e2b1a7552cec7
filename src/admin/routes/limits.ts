/**
 * `/limits/rules` and `/vqueues/{id}/pause|resume` (reference-behavior.md §3.8).
 *
 * Rules are stored (registry document), listed by `sys_rules`, and handed to the runtime,
 * whose limiters apply them to waiting invocations at once. Pause/resume answer 202 for every
 * well-formed id, known or not, as the reference does; a known queue's pause is stored in its
 * scope's limiter before the answer, and holds (the reference's does not, §3.8).
 */
import type Router from '@koa/router';
import { deleteRules, upsertRules, type LimitRule } from '../../registry/extras.js';
import type { Registry } from '../../registry/registry.js';
import { decodeDeleteRules, decodeUpsertRules, vqueueParam } from '../extras-requests.js';
import { readJsonBody, sendEmpty, sendJson } from '../http-io.js';

export interface FlowControl {
  rulesChanged(): Promise<void>;
  setVqueuePaused(vqueueId: string, paused: boolean): Promise<boolean>;
}

const ruleView = (r: LimitRule) => ({
  pattern: r.pattern,
  limits: {
    ...(r.concurrency !== undefined ? { concurrency: r.concurrency } : {}),
    ...(r.rate !== undefined ? { rate: r.rate } : {}),
    ...(r.backlog !== undefined ? { backlog: r.backlog } : {}),
  },
  description: r.description,
  disabled: r.disabled,
  version: r.version,
  last_modified_millis_since_epoch: r.lastModified,
});

export function limitRoutes(router: Router, registry: Registry, flow?: FlowControl): void {
  router.put('/limits/rules', async (ctx) => {
    const changes = decodeUpsertRules(readJsonBody(ctx));
    const rules = await registry.changeExtras((x) => upsertRules(x, changes, Date.now()));
    await flow?.rulesChanged();
    sendJson(ctx, 200, rules.map(ruleView));
  });

  router.post('/limits/rules/bulk-delete', async (ctx) => {
    const deletes = decodeDeleteRules(readJsonBody(ctx));
    const deleted = await registry.changeExtras((x) => deleteRules(x, deletes));
    await flow?.rulesChanged();
    sendJson(ctx, 200, deleted);
  });

  for (const action of ['pause', 'resume']) {
    router.post(`/vqueues/:vqueue/${action}`, async (ctx) => {
      const id = vqueueParam(ctx.params['vqueue'] ?? '');
      await flow?.setVqueuePaused(id, action === 'pause');
      sendEmpty(ctx, 202);
    });
  }
}
