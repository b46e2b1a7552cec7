/**
 * Which service-protocol version a deployment is talked to (service-protocol.md §4): the
 * highest both sides support, where redstate supports v5–v6, and v7 only when enabled
 * (like Restate 1.7's `experimental-enable-protocol-v7`).
 */
export const MIN_SUPPORTED_VERSION = 5;

export function negotiatedVersion(
  deployment: { minProtocolVersion: number; maxProtocolVersion: number },
  enableV7: boolean,
): number | undefined {
  const version = Math.min(deployment.maxProtocolVersion, enableV7 ? 7 : 6);
  return version >= Math.max(deployment.minProtocolVersion, MIN_SUPPORTED_VERSION) ? version : undefined;
}
