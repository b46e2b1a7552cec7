/**
 * One virtual-object key or workflow id: its object-key machine (lock holder, inbox in order,
 * live), when its state expires (state_ttl), its K/V state with editing, and a workflow's
 * durable promises.
 */
import { useEffect, useState } from 'preact/hooks';
import { onLive, type LiveChange } from '../api/live';
import { Ago } from '../components/Ago';
import { ErrorBox } from '../components/ErrorBox';
import { formatDuration } from '../format';
import { objectKeyLayout } from '../graph/layouts';
import { MachineDiagram } from '../graph/MachineDiagram';
import { useLoad } from '../hooks/use-load';
import { loadKey } from '../object/load-key';
import { StateEditor } from '../object/StateEditor';

type Lock = { state: string; holder?: string | undefined; inbox: string[] };

export function ObjectKey({ service, objectKey }: { service: string; objectKey: string }) {
  const isMine = (c: LiveChange) =>
    c.objects.some((o) => o.service === service && o.key === objectKey) ||
    c.state.some((s) => s.service === service && s.key === objectKey) ||
    c.promises.some((p) => p.service === service && p.key === objectKey) ||
    c.invocations.some((i) => i.target?.service === service && i.target.key === objectKey);
  const view = useLoad(() => loadKey(service, objectKey), [service, objectKey], { staleOn: isMine });
  // The lock record itself arrives with each change: shown at once, before the reload.
  const [liveLock, setLiveLock] = useState<Lock>();
  useEffect(() => {
    setLiveLock(undefined);
    return onLive((c) => {
      if (c === 'reconnected') return setLiveLock(undefined);
      const o = c.objects.find((x) => x.service === service && x.key === objectKey);
      if (o) setLiveLock({ state: o.state ?? 'free', holder: o.holder, inbox: o.inbox });
    });
  }, [service, objectKey]);

  const v = view.data;
  const lock: Lock | undefined =
    liveLock ??
    (v ? { state: v.holder ? 'locked' : 'free', holder: v.holder, inbox: v.inbox.map((i) => i.id) } : undefined);
  const workflow = v?.ty === 'workflow';
  const link = (id: string) =>
    id.startsWith('inv_') ? (
      <a class="mono" href={`/ui/invocations/${id}`}>
        {id}
      </a>
    ) : (
      <span class="mono" title="an admin state mutation waiting for the lock">
        {id}
      </span>
    );
  return (
    <div class="stack">
      <div class="page-head">
        <h1>
          <a href={`/ui/services/${encodeURIComponent(service)}`}>{service}</a> / <span class="mono">{objectKey}</span>
        </h1>
        <span class="badge">{workflow ? 'workflow id' : 'object key'}</span>
        <span class="spacer" />
        <a
          class="btn"
          href={`/ui/invocations?service=${encodeURIComponent(service)}&key=${encodeURIComponent(objectKey)}`}
        >
          Its invocations
        </a>
      </div>
      <ErrorBox error={view.error} />
      <div class="grid key-page">
        <div class="stack">
          <div class="card" id="lock">
            <div class="row" style={{ justifyContent: 'space-between' }}>
              <h2>Lock</h2>
              <span class="muted small">machines/object-key.ts</span>
            </div>
            <MachineDiagram
              layout={objectKeyLayout}
              current={lock?.state}
              tone={lock?.state === 'locked' ? 'warn' : 'ok'}
              maxScale={1}
              title="object-key machine"
            />
            <dl class="kv" style={{ marginTop: '12px' }}>
              <dt>Holder</dt>
              <dd>{lock?.holder ? link(lock.holder) : <span class="muted">nobody: the key is free</span>}</dd>
              <dt>State expires</dt>
              <dd id="state-expiry">
                {v?.expiry ? (
                  <>
                    <Ago at={v.expiry.at} />{' '}
                    <span class="muted">
                      (state_ttl {formatDuration(v.expiry.ttlMs)}; a write starts it again, a held lock puts it off)
                    </span>
                  </>
                ) : (
                  <span class="muted">never</span>
                )}
              </dd>
              <dt>Inbox</dt>
              <dd>
                {lock && lock.inbox.length > 0 ? (
                  <ol style={{ margin: 0, paddingLeft: '18px' }}>
                    {lock.inbox.map((id) => (
                      <li key={id}>{link(id)}</li>
                    ))}
                  </ol>
                ) : (
                  <span class="muted">empty</span>
                )}
              </dd>
            </dl>
          </div>
        </div>
        <div class="stack">
          {v && <StateEditor service={service} objectKey={objectKey} state={v.state} />}
          {workflow && v && (
            <div class="card" id="promises">
              <h2>Durable promises</h2>
              {v.promises.length === 0 ? (
                <div class="empty">No promises.</div>
              ) : (
                <table>
                  <thead>
                    <tr>
                      <th>Name</th>
                      <th>Completed</th>
                      <th>Value</th>
                    </tr>
                  </thead>
                  <tbody>
                    {v.promises.map((p) => (
                      <tr key={p.key}>
                        <td class="mono">{p.key}</td>
                        <td>{p.completed ? 'yes' : 'waiting'}</td>
                        <td class="mono">{p.completion_failure ?? p.completion_success_value_utf8 ?? ''}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </div>
          )}
        </div>
      </div>
    </div>
  );
}
