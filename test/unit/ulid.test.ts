/** The ingress's ULIDs (src/ingress/ulid.ts): Crockford base32 of the time and 80 random bits. */
import test from 'ava';
import { ulid } from '../../src/ingress/ulid.js';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The 80 bits as one number, written 5 bits at a time: the definition, slowly. */
function reference(now: number, random: Uint8Array): string {
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32]! + time;
  let bits = 0n;
  for (const byte of random) bits = (bits << 8n) | BigInt(byte);
  let rest = '';
  for (let i = 0; i < 16; i++, bits >>= 5n) rest = ALPHABET[Number(bits & 31n)]! + rest;
  return time + rest;
}

test('the time and the random bits, as the definition writes them', (t) => {
  const cases = [new Uint8Array(10), new Uint8Array(10).fill(255), Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])];
  let seed = 1;
  for (let i = 0; i < 1000; i++)
    cases.push(Uint8Array.from({ length: 10 }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) & 255));
  for (const random of cases)
    for (const now of [0, 1_700_000_000_000, 2 ** 48 - 1]) t.is(ulid(now, random), reference(now, random));
  t.is(ulid(0, new Uint8Array(10).fill(255)), '0000000000ZZZZZZZZZZZZZZZZ');
});

test('a fresh one: 26 characters of the alphabet, its time first', (t) => {
  const id = ulid(1_700_000_000_000);
  t.regex(id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  t.is(id.slice(0, 10), reference(1_700_000_000_000, new Uint8Array(10)).slice(0, 10));
});
