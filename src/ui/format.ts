/** How times, durations and values read on the pages. */

/** `/query` JSON gives timestamps as ISO strings; live events as epoch ms. */
export function toMs(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value !== '') {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `14:03:07.215`, with the date in front when it is not today. */
export function formatTime(value: unknown): string {
  const ms = toMs(value);
  if (ms === undefined) return '—';
  const d = new Date(ms);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  return d.toDateString() === new Date().toDateString() ? time : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

export function ago(value: unknown, now = Date.now()): string {
  const ms = toMs(value);
  return ms === undefined ? '—' : `${formatDuration(Math.max(0, now - ms))} ago`;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Bytes as a person wants to read them: pretty JSON when they are JSON, else text, else
 * hex. Journal values arrive as arrays of byte numbers (sys_journal.entry_json).
 */
export function decodeBytes(bytes: Uint8Array | number[]): { kind: 'json' | 'text' | 'binary'; text: string } {
  const arr = bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes);
  let text: string;
  try {
    text = utf8.decode(arr);
  } catch {
    return { kind: 'binary', text: [...arr].map((b) => b.toString(16).padStart(2, '0')).join(' ') };
  }
  try {
    return { kind: 'json', text: JSON.stringify(JSON.parse(text), null, 2) };
  } catch {
    return { kind: 'text', text };
  }
}

export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
