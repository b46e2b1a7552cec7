/**
 * The state of every key of a virtual object or workflow side by side: one row per key, one
 * column per state name, values decoded as text. A key filter is part of the address; a key
 * links to its page, where its state is edited.
 */
import { useLocation } from 'preact-iso';
import { getService } from '../api/admin';
import { stateAcrossKeys } from '../api/keys';
import { ErrorBox } from '../components/ErrorBox';
import { useLoad } from '../hooks/use-load';
import { ServiceHead } from '../service/ServiceHead';

const LIMIT = 2000;
const shorten = (text: string) => (text.length > 80 ? `${text.slice(0, 80)}…` : text);

export function ServiceState({ name }: { name: string }) {
  const { query: q, route, path } = useLocation();
  const filter = q.key ?? '';
  const service = useLoad(() => getService(name), [name]);
  const state = useLoad(() => stateAcrossKeys(name, filter, LIMIT), [name, filter], {
    staleOn: (c) => c.state.some((s) => s.service === name) || c.deleted.length > 0,
  });
  const data = state.data;
  return (
    <div class="stack">
      <ServiceHead name={name} ty={service.data?.ty} />
      <ErrorBox error={service.error ?? state.error} />
      <div class="card" id="state-across">
        <div class="row" style={{ marginBottom: '10px' }}>
          <label class="field" style={{ flexDirection: 'row', alignItems: 'center', gap: '8px' }}>
            Key contains
            <input
              name="key"
              value={filter}
              placeholder="any"
              onChange={(e) =>
                route(
                  `${path}${e.currentTarget.value ? `?key=${encodeURIComponent(e.currentTarget.value)}` : ''}`,
                  true,
                )
              }
            />
          </label>
          <span class="muted small">{data ? `${data.rows.length} keys with state` : 'loading…'}</span>
        </div>
        {data && data.rows.length === 0 && <div class="empty">No state{filter ? ' for these keys' : ''}.</div>}
        {data && data.rows.length > 0 && (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Key</th>
                  {data.names.map((n) => (
                    <th key={n} class="mono">
                      {n}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {data.rows.map((r) => (
                  <tr key={r.key} data-key={r.key}>
                    <td class="mono">
                      <a href={`/ui/objects/${encodeURIComponent(name)}/${encodeURIComponent(r.key)}`}>{r.key}</a>
                    </td>
                    {data.names.map((n) => {
                      const cell = r.cells.get(n);
                      return (
                        <td key={n} class="mono" title={cell?.text}>
                          {cell === undefined ? (
                            ''
                          ) : cell.text !== undefined ? (
                            shorten(cell.text)
                          ) : (
                            <span class="muted">({cell.length} bytes)</span>
                          )}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {data?.truncated && (
          <div class="muted small">The first {LIMIT} entries are shown; filter by key for the rest.</div>
        )}
      </div>
    </div>
  );
}
