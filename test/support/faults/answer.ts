/** One HTTP exchange of the campaign, reduced to what the checks need. */
import type { Response } from 'got';
import { setTimeout as delay } from 'node:timers/promises';

export type Answer = { status: number; body: string; invocationId: string | undefined } | { error: string };

const REFUSED_RETRY_MS = 100;

/**
 * Sends until there is an answer or `deadline` passes. Only a refused connection is sent again:
 * the request never reached the server (it is down for a moment), so sending it again cannot
 * make it happen twice. Any other error leaves the outcome unknown and is returned.
 */
export async function answer(
  deadline: number,
  send: (timeoutMs: number) => Promise<Response<string>>,
): Promise<Answer> {
  for (;;) {
    try {
      const res = await send(Math.max(1, deadline - Date.now()));
      const id = res.headers['x-restate-id'];
      return { status: res.statusCode, body: res.body, invocationId: typeof id === 'string' ? id : undefined };
    } catch (err) {
      const code = (err as { code?: string }).code ?? String(err);
      if (code !== 'ECONNREFUSED' || Date.now() + REFUSED_RETRY_MS >= deadline) return { error: code };
      await delay(REFUSED_RETRY_MS);
    }
  }
}

/** The JSON body of an answer with `status`, else undefined. */
export function jsonOf(a: Answer, status = 200): unknown {
  if (!('status' in a) || a.status !== status) return undefined;
  try {
    return JSON.parse(a.body) as unknown;
  } catch {
    return undefined;
  }
}

export function describe(a: Answer): string {
  return 'error' in a ? a.error : `${a.status} ${a.body.slice(0, 300)}`;
}
