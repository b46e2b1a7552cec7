/** Per-handler health over the last hour (api/health.ts), on the overview and a service's page. */
import type { HandlerHealth } from '../api/health';
import { formatDuration } from '../format';

const rate = (h: HandlerHealth) => (h.completed === 0 ? undefined : h.failed / h.completed);

export function HealthTable({ rows, showService }: { rows: HandlerHealth[]; showService: boolean }) {
  if (rows.length === 0) return <div class="empty">No invocations in the last hour.</div>;
  return (
    <div class="table-wrap">
      <table class="health">
        <thead>
          <tr>
            <th>Handler</th>
            <th class="num">Completed</th>
            <th class="num">Per min</th>
            <th class="num">Failed</th>
            <th class="num">p50</th>
            <th class="num">p99</th>
            <th class="num">In flight</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((h) => {
            const r = rate(h);
            const list = `/ui/invocations?service=${encodeURIComponent(h.service)}&handler=${encodeURIComponent(h.handler)}`;
            return (
              <tr key={`${h.service}/${h.handler}`} data-handler={`${h.service}/${h.handler}`}>
                <td>
                  <a href={list}>{showService ? `${h.service}/${h.handler}` : h.handler}</a>
                </td>
                <td class="num">{h.completed}</td>
                <td class="num">{(h.completed / 60).toFixed(h.completed < 60 ? 2 : 1)}</td>
                <td class={`num ${r && r > 0 ? 's-bad' : ''}`}>
                  {r === undefined ? (
                    '—'
                  ) : (
                    <a href={`${list}&status=failed`} class="plain">
                      {(r * 100).toFixed(r > 0 && r < 0.1 ? 1 : 0)} %
                    </a>
                  )}
                </td>
                <td class="num">{h.p50 === undefined ? '—' : formatDuration(h.p50)}</td>
                <td class="num">{h.p99 === undefined ? '—' : formatDuration(h.p99)}</td>
                <td class="num">{h.inFlight > 0 ? <a href={`${list}&status=in-flight`}>{h.inFlight}</a> : 0}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
