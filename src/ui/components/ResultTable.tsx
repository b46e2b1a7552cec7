/** Rows of a query as a plain table, columns in the order of the first row. */
import type { Row } from '../api/query';

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function ResultTable({ rows }: { rows: Row[] }) {
  if (rows.length === 0) return <div class="empty">No rows.</div>;
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>{columns.map((c) => <th key={c}>{c}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {columns.map((c) => (
                <td key={c} class="mono">
                  {cell(r[c])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
