/** An invocation's status as a coloured pill; completed ones say how they ended (api/outcome.ts). */
import { shownStatus, type StatusFields } from '../api/outcome';

export function StatusBadge({ row }: { row: StatusFields }) {
  const shown = shownStatus(row);
  return <span class={`badge s-${shown}`}>{shown}</span>;
}
