/**
 * Calls one handler through the ingress, as a client would: JSON or raw body, object key /
 * workflow id, call or send, delay, idempotency key. Shows the answer with its status and
 * headers, and links the invocation.
 *
 * The browser only lets a page read the headers the ingress exposes to other origins, which
 * do not include `x-restate-id`; so a call carries an idempotency key (the one given, or a
 * fresh one) and its invocation is found by that key in sys_invocation.
 */
import { useState } from 'preact/hooks';
import type { ServiceDetails, ServiceHandler } from '../api/admin';
import { rawRequest, type RawResponse } from '../api/http';
import { query, sqlString } from '../api/query';
import { ErrorBox } from '../components/ErrorBox';
import { prettyJson } from '../format';
import { exampleOf } from './example';
import { ingressUrl } from './ingress-url';

interface Answer {
  response: RawResponse;
  invocationId?: string;
  took: number;
}

async function invocationByKey(
  service: string,
  handler: string,
  key: { idempotency?: string; object?: string },
): Promise<string | undefined> {
  const where = [`target_service_name = ${sqlString(service)}`, `target_handler_name = ${sqlString(handler)}`];
  if (key.idempotency !== undefined) where.push(`idempotency_key = ${sqlString(key.idempotency)}`);
  if (key.object !== undefined) where.push(`target_service_key = ${sqlString(key.object)}`);
  const rows = await query<{ id: string }>(
    `SELECT id FROM sys_invocation WHERE ${where.join(' AND ')} ORDER BY created_at DESC LIMIT 1`,
  );
  return rows[0]?.id;
}

/** An example from the handler's input schema when it has one (service/example.ts), else an empty JSON string. */
function initialBody(handler: ServiceHandler): string {
  if (handler.input_description === 'none') return '';
  if (handler.input_json_schema !== undefined && handler.input_json_schema !== null)
    return JSON.stringify(exampleOf(handler.input_json_schema), null, 2);
  return '""';
}

export function Playground({ service, handler }: { service: ServiceDetails; handler: ServiceHandler }) {
  const keyed = service.ty !== 'Service';
  const workflow = service.ty === 'Workflow';
  const [body, setBody] = useState(initialBody(handler));
  const [raw, setRaw] = useState(false);
  const [key, setKey] = useState('');
  const [mode, setMode] = useState<'call' | 'send'>('call');
  const [delay, setDelay] = useState('');
  const [idempotencyKey, setIdempotencyKey] = useState('');
  const [answer, setAnswer] = useState<Answer>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    if (!raw && body.trim() !== '') {
      try {
        JSON.parse(body);
      } catch (err) {
        setError(`The body is not JSON: ${(err as Error).message}. Tick "raw" to send it as text.`);
        return;
      }
    }
    if (keyed && key === '') {
      setError(`${workflow ? 'A workflow id' : 'An object key'} is needed.`);
      return;
    }
    setBusy(true);
    try {
      const base = await ingressUrl();
      const path = `${encodeURIComponent(service.name)}${keyed ? `/${encodeURIComponent(key)}` : ''}/${encodeURIComponent(handler.name)}`;
      const params = mode === 'send' && delay ? `?delay=${encodeURIComponent(delay)}` : '';
      // Workflows are named by their id; other calls by an idempotency key (see above).
      const idem = workflow ? undefined : idempotencyKey || (mode === 'call' ? `ui-${crypto.randomUUID()}` : undefined);
      const headers: Record<string, string> = { 'content-type': raw ? 'text/plain' : 'application/json' };
      if (idem) headers['idempotency-key'] = idem;
      const started = performance.now();
      const response = await rawRequest(`${base}/restate/${mode}/${path}${params}`, {
        method: 'POST',
        headers,
        ...(body !== '' ? { body } : {}),
      });
      const took = performance.now() - started;
      let invocationId: string | undefined;
      if (mode === 'send') {
        try {
          invocationId = (JSON.parse(response.body) as { invocationId?: string }).invocationId;
        } catch {
          invocationId = undefined;
        }
      } else {
        invocationId = await invocationByKey(service.name, handler.name, {
          ...(idem ? { idempotency: idem } : {}),
          ...(workflow ? { object: key } : {}),
        });
      }
      setAnswer({ response, took, ...(invocationId ? { invocationId } : {}) });
    } catch (err) {
      setError(`The ingress did not answer: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  const ok = answer && answer.response.status < 300;
  return (
    <form class="playground" onSubmit={submit} aria-label={`playground ${handler.name}`}>
      <h3>Playground</h3>
      <div class="form-grid">
        {keyed && (
          <label class="field">
            {workflow ? 'Workflow id' : 'Object key'}
            <input name="key" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
          </label>
        )}
        <label class="field">
          Mode
          <select name="mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as 'call' | 'send')}>
            <option value="call">call (waits)</option>
            <option value="send">send (one-way)</option>
          </select>
        </label>
        {mode === 'send' && (
          <label class="field">
            Delay
            <input name="delay" placeholder="e.g. 10s" value={delay} onInput={(e) => setDelay(e.currentTarget.value)} />
          </label>
        )}
        {!workflow && (
          <label class="field">
            Idempotency key
            <input
              name="idempotency-key"
              placeholder="optional"
              value={idempotencyKey}
              onInput={(e) => setIdempotencyKey(e.currentTarget.value)}
            />
          </label>
        )}
      </div>
      <label class="field" style={{ marginTop: '10px' }}>
        <span>
          Body {raw ? '(raw text)' : '(JSON)'}{' '}
          <label class="check">
            <input type="checkbox" checked={raw} onChange={() => setRaw(!raw)} /> raw
          </label>
        </span>
        <textarea
          name="body"
          rows={Math.min(10, Math.max(3, body.split('\n').length))}
          value={body}
          onInput={(e) => setBody(e.currentTarget.value)}
        />
      </label>
      <div class="row" style={{ marginTop: '10px' }}>
        <button class="primary" type="submit" disabled={busy}>
          {busy ? (mode === 'call' ? 'Waiting for the result…' : 'Sending…') : mode === 'call' ? 'Call' : 'Send'}
        </button>
      </div>
      <ErrorBox error={error} />
      {answer && (
        <div class="value" style={{ marginTop: '10px', maxHeight: 'none' }} aria-label="answer">
          <div class="row">
            <span class={`badge ${ok ? 's-ok' : 's-bad'}`}>{answer.response.status}</span>
            <span class="muted small">{Math.round(answer.took)} ms</span>
            {answer.invocationId && (
              <a class="mono" href={`/ui/invocations/${answer.invocationId}`}>
                {answer.invocationId}
              </a>
            )}
          </div>
          <pre class="small muted" style={{ margin: '6px 0' }}>
            {answer.response.headers.map(([k, v]) => `${k}: ${v}`).join('\n')}
          </pre>
          <pre>{prettyJson(answer.response.body)}</pre>
        </div>
      )}
    </form>
  );
}
