/**
 * Helpers for the tests of test/support/services/context.mjs: one-way sends through the
 * ingress, and the values the service publishes as counters `<tag>:<name>=<value>`.
 */
import type { Stack } from './stack.js';
import { waitFor } from './wait.js';

/** `POST /restate/send/<path>`; answers the new invocation's id. */
export async function sendTo(stack: Stack, path: string, json: unknown): Promise<string> {
  const res = await stack.ingress.post(`restate/send/${path}`, { json });
  if (res.statusCode !== 202) throw new Error(`send ${path}: ${res.statusCode} ${res.body}`);
  return (JSON.parse(res.body) as { invocationId: string }).invocationId;
}

/** What was published under `<tag>:<name>`: each value with the number of executions that saw it. */
export async function published(stack: Stack, tag: string, name: string): Promise<Map<string, number>> {
  const prefix = `${tag}:${name}=`;
  const counts = await stack.counts();
  return new Map(
    Object.entries(counts)
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, n]) => [k.slice(prefix.length), n]),
  );
}

/** The first value published under `<tag>:<name>`, once there is one. */
export async function awaitPublished(stack: Stack, tag: string, name: string, ms = 15_000): Promise<string> {
  let value: string | undefined;
  await waitFor(async () => {
    [value] = (await published(stack, tag, name)).keys();
    return value !== undefined;
  }, ms);
  return value!;
}

/** Resolves the awakeable a handler published as `<tag>:awakeable`, once it has. */
export async function resolveAwakeable(stack: Stack, tag: string, value: unknown): Promise<void> {
  const id = await awaitPublished(stack, tag, 'awakeable');
  const res = await stack.ingress.post(`restate/awakeables/${id}/resolve`, { json: value });
  if (res.statusCode !== 202) throw new Error(`resolve ${tag}: ${res.statusCode} ${res.body}`);
}
