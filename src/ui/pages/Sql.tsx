/** SQL over /query, the same tables the `restate` CLI reads; the result as a table. */
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { queryTable, type Row } from '../api/query';
import { ErrorBox } from '../components/ErrorBox';
import { ResultTable } from '../components/ResultTable';

const EXAMPLES = [
  'SELECT id, target, status, created_at FROM sys_invocation ORDER BY created_at DESC LIMIT 20',
  'SELECT status, COUNT(*) AS n FROM sys_invocation GROUP BY status',
  'SELECT id, index, from_state, event, to_state, "at", attempt FROM sys_invocation_transitions ORDER BY id, index LIMIT 50',
  'SELECT service_name, service_key, key, value_utf8 FROM state',
  'SELECT table_name FROM information_schema.tables',
];

export function Sql() {
  const { query: q, route } = useLocation();
  const [sql, setSql] = useState(q.q ?? EXAMPLES[0]!);
  const [result, setResult] = useState<{ rows: Row[]; columns: string[]; ms: number }>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setError(undefined);
    route(`/ui/sql?q=${encodeURIComponent(sql)}`, true);
    const started = performance.now();
    try {
      const table = await queryTable(sql);
      setResult({ ...table, ms: performance.now() - started });
    } catch (err) {
      setResult(undefined);
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="stack">
      <div class="page-head">
        <h1>SQL console</h1>
        <span class="sub">over the introspection tables of /query</span>
      </div>
      <div class="card">
        <textarea
          name="sql"
          rows={5}
          value={sql}
          aria-label="SQL"
          onInput={(e) => setSql(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void run();
          }}
        />
        <div class="row" style={{ marginTop: '10px' }}>
          <button class="primary" onClick={run} disabled={busy}>
            {busy ? 'Running…' : 'Run'}
          </button>
          <span class="muted small">Ctrl+Enter runs it.</span>
          <span style={{ flex: 1 }} />
          <select aria-label="examples" onChange={(e) => setSql(e.currentTarget.value)} value="">
            <option value="">Examples…</option>
            {EXAMPLES.map((x) => (
              <option key={x} value={x}>
                {x.length > 70 ? `${x.slice(0, 70)}…` : x}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorBox error={error} />
      {result && (
        <div class="card">
          <div class="muted small" style={{ marginBottom: '8px' }}>
            {result.rows.length} rows · {Math.round(result.ms)} ms
          </div>
          <ResultTable rows={result.rows} columns={result.columns} />
        </div>
      )}
    </div>
  );
}
