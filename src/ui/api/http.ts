/**
 * Requests to the admin API of the server that serves this page (same origin). Errors carry
 * the server's own message (`{"message"}` bodies, or text), so pages can show it as is.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface RawResponse {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

/** The raw answer, whatever its status: for the playground, which shows it whole. */
export async function rawRequest(url: string, init: RequestInit = {}): Promise<RawResponse> {
  const res = await fetch(url, init);
  return { status: res.status, headers: [...res.headers.entries()], body: await res.text() };
}

async function failure(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const json = JSON.parse(text) as { message?: unknown };
    if (typeof json.message === 'string') return new ApiError(res.status, json.message);
  } catch {
    // not JSON: the text is the message
  }
  return new ApiError(res.status, text || `${res.status} ${res.statusText}`);
}

/** A JSON request; resolves with the parsed body (undefined when empty), rejects with ApiError. */
export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await requestWithHeaders<T>(method, path, body)).body;
}

/** The same, with the answer's headers. */
export async function requestWithHeaders<T>(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ body: T; headers: Headers }> {
  const res = await fetch(path, {
    method,
    headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw await failure(res);
  const text = await res.text();
  return { body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
}
