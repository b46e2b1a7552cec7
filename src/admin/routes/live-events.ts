/**
 * `GET /events`: the web UI's live updates as Server-Sent Events, one `data:` message per
 * committed change (store/observed.ts), so pages follow invocations, object keys and state
 * without polling. Not a Restate API: the one private endpoint of the UI besides the
 * `sys_invocation_transitions` table.
 *
 * Each message is JSON `LiveChange`. A client that reconnects may have missed changes: it
 * reloads what it shows (the browser's EventSource reconnects by itself after `retry` ms).
 */
import type Router from '@koa/router';
import { statusOf, type InvocationContext } from '../../../machines/invocation.js';
import type { ObjectKeyContext } from '../../../machines/object-key.js';
import { RecordKind } from '../../model/persisted.js';
import type { ObservedStore, StoreChange } from '../../store/observed.js';
import type { HistoryEntry } from '../../store/types.js';

export interface LiveInvocation {
  id: string;
  /**
   * Machine state (machines/invocation.ts) and Restate's status name, when the snapshot was
   * written; absent when only the journal grew.
   */
  state?: string;
  status?: string;
  target?: InvocationContext['target'];
  /** The invocation that called or sent this one (sys_invocation.invoked_by_id). */
  parent?: string;
  modifiedAt?: number;
  retryCount?: number;
  /** The history entries this commit appended. */
  history: HistoryEntry[];
}

export interface LiveChange {
  /** Deleted before `invocations` were written: an id in both was purged and written anew. */
  deleted: string[];
  invocations: LiveInvocation[];
  /** Object-key lock actors (machines/object-key.ts); `state` absent when the record went away. */
  objects: Array<{ service: string; key: string; state?: string; holder?: string; inbox: string[] }>;
  /** Workflow promises that were written. */
  promises: Array<{ service: string; key: string; name: string }>;
  /** Objects / workflows whose K/V state was written. */
  state: Array<{ service: string; key: string }>;
}

export const LIVE_RECORD_KINDS = [RecordKind.objectKey, RecordKind.promise];

/** Past this much unsent output a client is too slow: its stream ends and it reloads. */
const MAX_BUFFERED = 1 << 20;
const PING_MS = 15_000;

function invocationOf(inv: StoreChange['invocations'][number]): LiveInvocation {
  const snapshot = inv.snapshot as { value?: string; context?: InvocationContext } | undefined;
  if (!snapshot?.value || !snapshot.context) return { id: inv.id, history: inv.history };
  const { target, modifiedAt, retryCount, parent, caller } = snapshot.context;
  const by = parent?.invocationId ?? caller?.invocationId;
  return {
    id: inv.id,
    state: snapshot.value,
    status: statusOf(snapshot.value),
    target,
    ...(by ? { parent: by } : {}),
    modifiedAt,
    retryCount,
    history: inv.history,
  };
}

export function liveChangeOf(change: StoreChange): LiveChange {
  const out: LiveChange = {
    deleted: change.deleted,
    invocations: change.invocations.map(invocationOf),
    objects: [],
    promises: [],
    state: change.state,
  };
  for (const r of change.records) {
    if (r.kind === RecordKind.objectKey) {
      const [service, key] = JSON.parse(r.key) as [string, string];
      const lock = r.value as { value: string; context: ObjectKeyContext } | null;
      out.objects.push(
        lock
          ? {
              service,
              key,
              state: lock.value,
              ...(lock.context.holder ? { holder: lock.context.holder } : {}),
              inbox: lock.context.inbox,
            }
          : { service, key, inbox: [] },
      );
    } else if (r.kind === RecordKind.promise) {
      const [service, key, name] = JSON.parse(r.key) as [string, string, string];
      out.promises.push({ service, key, name });
    }
  }
  return out;
}

/**
 * `stopping` ends every stream (the server stops: they would hold its graceful stop up).
 *
 * The route writes to the socket itself (`ctx.respond = false`) rather than handing Koa a
 * stream to pipe: a client that goes away (a closed tab) is the normal end of an event
 * stream, which Koa's pipe would report as an error, with its stack on stderr.
 */
export function liveEventRoutes(store: ObservedStore, stopping: AbortSignal): (router: Router) => void {
  return (router) => {
    router.get('/events', (ctx) => {
      const res = ctx.res;
      ctx.req.socket.setTimeout(0);
      ctx.req.socket.setNoDelay(true);
      ctx.respond = false;
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
      });
      const write = (text: string) => {
        if (res.writableEnded || res.destroyed) return;
        if (res.writableLength > MAX_BUFFERED) res.end();
        else res.write(text);
      };
      // Sent at once, so the client knows it is connected before the first change.
      write('retry: 1000\n: connected\n\n');
      const unsubscribe = store.subscribe((change) => write(`data: ${JSON.stringify(liveChangeOf(change))}\n\n`));
      const ping = setInterval(() => write(': ping\n\n'), PING_MS);
      const end = () => res.end();
      const stop = () => {
        unsubscribe();
        clearInterval(ping);
        stopping.removeEventListener('abort', end);
      };
      res.once('close', stop);
      if (stopping.aborted) end();
      else stopping.addEventListener('abort', end);
    });
  };
}
