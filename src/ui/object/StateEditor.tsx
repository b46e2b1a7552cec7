/**
 * An object's K/V state, viewed and edited. Saving replaces the whole state through the admin
 * state API with the version of the state shown, so an edit made on a stale view is refused
 * by the server instead of overwriting what changed meanwhile.
 */
import { useEffect, useState } from 'preact/hooks';
import { setObjectState } from '../api/admin';
import { stateVersion } from '../api/state-version';
import { ErrorBox } from '../components/ErrorBox';
import { decodeBytes } from '../format';
import type { StateEntry } from './load-key';

interface Draft {
  key: string;
  text: string;
  /** Binary values are kept as they are. */
  bytes?: Uint8Array;
}

const draftOf = (state: StateEntry[]): Draft[] =>
  state.map((s) => (s.text !== undefined ? { key: s.key, text: s.text } : { key: s.key, text: '', bytes: s.bytes }));

export function StateEditor({
  service,
  objectKey,
  state,
}: {
  service: string;
  objectKey: string;
  state: StateEntry[];
}) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<Draft[]>(draftOf(state));
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    if (!editing) setDraft(draftOf(state));
  }, [state, editing]);

  const save = async () => {
    setError(undefined);
    const keys = draft.map((d) => d.key);
    if (keys.some((k) => k === '') || new Set(keys).size !== keys.length) {
      setError('Every entry needs a key, and keys must differ.');
      return;
    }
    const next: Record<string, string | number[]> = {};
    for (const d of draft) next[d.key] = d.bytes ? [...d.bytes] : d.text;
    try {
      await setObjectState(service, objectKey, next, stateVersion(state.map((s) => [s.key, s.bytes])));
      setEditing(false);
      setNotice(
        'Saved: the new state applies once no invocation holds the key, if the state has not changed since it was shown.',
      );
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const update = (i: number, change: Partial<Draft>) =>
    setDraft((prev) => prev.map((d, j) => (j === i ? { ...d, ...change } : d)));

  return (
    <div class="card" id="state">
      <div class="row" style={{ justifyContent: 'space-between' }}>
        <h2 style={{ margin: 0 }}>State</h2>
        {!editing && (
          <button onClick={() => (setNotice(undefined), setEditing(true))} disabled={false}>
            Edit
          </button>
        )}
      </div>
      {notice && (
        <div class="notice" style={{ margin: '10px 0' }}>
          {notice}
        </div>
      )}
      <ErrorBox error={error} />
      {editing ? (
        <div class="state-edit">
          {draft.map((d, i) => (
            <div key={i} class="state-entry" data-key={d.key}>
              <div class="row">
                <input
                  class="mono"
                  aria-label={`key ${i}`}
                  value={d.key}
                  placeholder="key"
                  onInput={(e) => update(i, { key: e.currentTarget.value })}
                />
                <span class="spacer" />
                <button class="danger" onClick={() => setDraft(draft.filter((_, j) => j !== i))}>
                  Remove
                </button>
              </div>
              {d.bytes ? (
                <pre class="muted">{decodeBytes(d.bytes).text}</pre>
              ) : (
                <textarea
                  aria-label={`value of ${d.key}`}
                  rows={Math.min(14, Math.max(3, d.text.split('\n').length + 1))}
                  value={d.text}
                  onInput={(e) => update(i, { text: e.currentTarget.value })}
                />
              )}
            </div>
          ))}
        </div>
      ) : (
        <table class="state-table" style={{ marginTop: '8px' }}>
          <thead>
            <tr>
              <th>Key</th>
              <th>Value</th>
            </tr>
          </thead>
          <tbody>
            {draftOf(state).map((d, i) => (
              <tr key={i} data-key={d.key}>
                <td class="mono">{d.key}</td>
                <td>
                  <pre class={d.bytes ? 'muted' : ''}>
                    {decodeBytes(d.bytes ?? new TextEncoder().encode(d.text)).text}
                  </pre>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {!editing && state.length === 0 && <div class="empty">No state.</div>}
      {editing && (
        <div class="row" style={{ marginTop: '10px' }}>
          <button onClick={() => setDraft([...draft, { key: '', text: '' }])}>Add entry</button>
          <span class="spacer" style={{ flex: 1 }} />
          <button onClick={() => setEditing(false)}>Discard</button>
          <button class="primary" onClick={save}>
            Save state
          </button>
        </div>
      )}
    </div>
  );
}
