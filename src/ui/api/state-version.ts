/**
 * The version of an object's state as the admin state API checks it (reference-behavior.md
 * §3.4, src/runtime/state-mutations.ts): SHA-256 over the entries sorted by key, each
 * `u64 BE index ‖ 0x01 ‖ key ‖ 0x02 ‖ value ‖ 0x03`, base64url without padding.
 * Computed in script, not with WebCrypto, which plain-HTTP pages on another host lack.
 */
import { sha256 } from '@noble/hashes/sha2.js';

const utf8 = new TextEncoder();

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

export function stateVersion(entries: Array<[string, Uint8Array]>): string {
  const hash = sha256.create();
  const sorted = entries.map(([k, v]) => [utf8.encode(k), v] as const).sort(([a], [b]) => compareBytes(a, b));
  sorted.forEach(([key, value], i) => {
    const index = new Uint8Array(8);
    new DataView(index.buffer).setBigUint64(0, BigInt(i));
    hash
      .update(index)
      .update(Uint8Array.of(1))
      .update(key)
      .update(Uint8Array.of(2))
      .update(value)
      .update(Uint8Array.of(3));
  });
  let binary = '';
  for (const byte of hash.digest()) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
