/** Rows of a query as a plain table, columns in the order the query gave them. */
import type { Row } from '../api/query';

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function ResultTable({ rows, columns }: { rows: Row[]; columns: string[] }) {
  if (rows.length === 0) return <div class="empty">No rows.</div>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {columns.map((c) => (
                <td key={c} class={`mono ${r[c] === undefined ? 'null' : ''}`}>
                  {r[c] === undefined ? 'NULL' : cell(r[c])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
