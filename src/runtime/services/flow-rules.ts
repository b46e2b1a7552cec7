/** The stored limit rules (registry/extras.ts) as a scope's limiter sees them: enabled, with limits, and possibly about that scope. */
import type { FlowRule } from '../../../machines/limiter.js';
import type { LimitRule } from '../../registry/extras.js';

export function flowRulesOf(rules: readonly LimitRule[], scope: string): FlowRule[] {
  const out: FlowRule[] = [];
  for (const r of rules) {
    if (r.disabled || (r.concurrency === undefined && r.rate === undefined && r.backlog === undefined)) continue;
    const first = r.pattern.split('/')[0];
    if (first !== '*' && first !== scope) continue;
    out.push({
      pattern: r.pattern,
      ...(r.concurrency !== undefined ? { concurrency: r.concurrency } : {}),
      ...(r.rate !== undefined ? { rate: r.rate } : {}),
      ...(r.backlog !== undefined ? { backlog: r.backlog } : {}),
    });
  }
  return out;
}
