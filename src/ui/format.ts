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
  return d.toDateString() === new Date().toDateString()
    ? time
    : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

/**
 * `850 ms`, `4.25 s`, `12.3 s`, `2 min 5 s`, `3 h 12 min`, `2 d 4 h`. Each unit is cut, not
 * rounded, so a value never reads as a full next unit ("2 min 60 s").
 */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.floor(ms)} ms`;
  if (ms < 10_000) return `${(Math.floor(ms / 10) / 100).toFixed(2)} s`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

/** A past moment as "… ago", a future one as "in …". */
export function relative(value: unknown, now: number): string {
  const ms = toMs(value);
  if (ms === undefined) return '—';
  return ms <= now ? `${formatDuration(now - ms)} ago` : `in ${formatDuration(ms - now)}`;
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
