/** What the key view shows of one virtual-object key or workflow id, from /query. */
import { query, sqlString } from '../api/query';

export interface StateEntry {
  key: string;
  /** The value as text, when it is UTF-8. */
  text?: string;
  bytes: Uint8Array;
}

export interface KeyView {
  ty?: string;
  holder?: string;
  inbox: Array<{ id: string; sequence_number: number }>;
  state: StateEntry[];
  promises: Array<{
    key: string;
    completed: boolean;
    completion_success_value_utf8?: string;
    completion_failure?: string;
  }>;
  /** When the key's state expires unless written again (state_ttl), and the TTL in ms. */
  expiry?: { at: string; ttlMs: number };
}

/** `/query` prints a duration as ISO 8601 seconds (`PT600S`). */
function isoSecondsToMs(text: string): number {
  const m = /^PT(\d+(?:\.\d+)?)S$/.exec(text);
  return m ? Math.round(Number(m[1]) * 1000) : NaN;
}

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export async function loadKey(service: string, key: string): Promise<KeyView> {
  const where = `service_name = ${sqlString(service)} AND service_key = ${sqlString(key)}`;
  const [svc, holder, inbox, state, promises, expiry] = await Promise.all([
    query<{ ty: string }>(`SELECT ty FROM sys_service WHERE name = ${sqlString(service)}`),
    query<{ invocation_id: string }>(`SELECT invocation_id FROM sys_keyed_service_status WHERE ${where}`),
    query<{ id: string; sequence_number: number }>(
      `SELECT id, sequence_number FROM sys_inbox WHERE ${where} ORDER BY sequence_number`,
    ),
    query<{ key: string; value_utf8?: string; value: string }>(
      `SELECT key, value_utf8, value FROM state WHERE ${where} ORDER BY key`,
    ),
    query<KeyView['promises'][number]>(
      `SELECT key, completed, completion_success_value_utf8, completion_failure FROM sys_promise WHERE ${where} ORDER BY key`,
    ),
    query<{ expires_at: string; state_ttl: string }>(
      `SELECT expires_at, state_ttl FROM sys_state_expiry WHERE ${where} AND scope IS NULL`,
    ),
  ]);
  return {
    ...(svc[0] ? { ty: svc[0].ty } : {}),
    ...(holder[0] ? { holder: holder[0].invocation_id } : {}),
    inbox,
    state: state.map((s) => ({
      key: s.key,
      bytes: hexToBytes(s.value),
      ...(s.value_utf8 !== undefined ? { text: s.value_utf8 } : {}),
    })),
    promises,
    ...(expiry[0] ? { expiry: { at: expiry[0].expires_at, ttlMs: isoSecondsToMs(expiry[0].state_ttl) } } : {}),
  };
}
