import test from 'ava';
import { keyInAt, partitionOf, partitionOfId } from '../../src/model/partitioning.js';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  IdError,
  awakeableIdToString,
  deploymentIdToString,
  deterministicInvocationId,
  invocationIdFromBytes,
  invocationIdToBytes,
  invocationIdToString,
  newDeploymentId,
  newInvocationId,
  parseAwakeableId,
  checkVqueueIdForm,
  parseDeploymentId,
  parseU128Id,
  parseInvocationId,
  partitionKeyOf,
  clockedPartitionKey,
  unkeyedPartitionKey,
  type IdErrorReason,
  type InvocationId,
} from '../../src/protocol/ids.js';
import { fixturePath } from '../support/fixtures.js';
import { randomBytes } from '../../src/random.js';

const VECTORS = fixturePath('protocol-vectors');
const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const fromHex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));

interface Message {
  dir: string;
  type: string;
  decoded: Record<string, unknown>;
}
interface Exchange {
  note: string;
  http: { request_headers: Record<string, string> };
  messages: Message[];
}
const vectors = ['v6', 'v7'].flatMap((dir) =>
  readdirSync(path.join(VECTORS, dir))
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({
      name: `${dir}/${f}`,
      exchanges: (JSON.parse(readFileSync(path.join(VECTORS, dir, f), 'utf8')) as { exchanges: Exchange[] }).exchanges,
    })),
);

function startOf(ex: Exchange): { id: string; debugId: string } {
  const start = ex.messages.find((m) => m.type === 'Start');
  if (start === undefined) throw new Error(`no Start in ${ex.note}`);
  return { id: (start.decoded.id as { hex: string }).hex, debugId: start.decoded.debug_id as string };
}

function throwsIdError(
  t: import('ava').ExecutionContext,
  fn: () => unknown,
  reason: IdErrorReason,
  label: string,
): void {
  const err = t.throws(fn, { instanceOf: IdError }, label);
  t.is(err?.message, reason, label);
  t.is((err as IdError | undefined)?.reason, reason, label);
}

// --- invocation ids ----------------------------------------------------------------------------

test('the §14 example: bytes ⇄ string, with the little-endian byte-group quirk', (t) => {
  const bytes = fromHex('1e4a475baa6f26a46a52718c98780b9b3b0be319106c97ff');
  const s = 'inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi';
  const id = invocationIdFromBytes(bytes);
  t.is(id.partitionKey, 0x1e4a475baa6f26a4n);
  t.is(invocationIdToString(id), s);
  t.is(hex(invocationIdToBytes(parseInvocationId(s))), hex(bytes));
  t.is(s.length, 38);
});

test('every Start id / debug_id pair in the vectors, and the x-restate-invocation-id header', (t) => {
  let count = 0;
  for (const { name, exchanges } of vectors) {
    for (const ex of exchanges) {
      const { id, debugId } = startOf(ex);
      t.is(invocationIdToString(invocationIdFromBytes(fromHex(id))), debugId, name);
      t.is(hex(invocationIdToBytes(parseInvocationId(debugId))), id, name);
      t.is(ex.http.request_headers['x-restate-invocation-id'], debugId, name);
      count++;
    }
  }
  t.true(count >= 80, `${count} Start messages`);
});

test('invocation ids in CallInvocationIdCompletion notifications round-trip', (t) => {
  const ids = vectors.flatMap((v) =>
    v.exchanges.flatMap((ex) =>
      ex.messages
        .filter((m) => m.type === 'CallInvocationIdCompletionNotification')
        .map((m) => m.decoded.invocation_id as string),
    ),
  );
  t.true(ids.length > 0);
  for (const s of ids) t.is(invocationIdToString(parseInvocationId(s)), s);
});

test('extreme values are zero-padded to fixed width and round-trip', (t) => {
  const zero: InvocationId = { partitionKey: 0n, uuid: new Uint8Array(16) };
  t.is(invocationIdToString(zero), `inv_1${'0'.repeat(33)}`);
  const max: InvocationId = { partitionKey: 2n ** 64n - 1n, uuid: new Uint8Array(16).fill(0xff) };
  const s = invocationIdToString(max);
  t.is(s.length, 38);
  t.deepEqual(parseInvocationId(s), max);
  for (let i = 0; i < 200; i++) {
    const id = { partitionKey: randomBytes(8).readBigUInt64BE(0), uuid: newInvocationId(0n).uuid };
    t.deepEqual(parseInvocationId(invocationIdToString(id)), id);
  }
});

test('parseInvocationId errors match restate-server (reference-behavior.md §1.3)', (t) => {
  const valid = 'inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi';
  const cases: [string, IdErrorReason][] = [
    ['not-an-id', 'bad format'],
    ['garbage', 'bad format'],
    ['bad', 'bad format'],
    ['inv_123', 'bad length'],
    ['', 'bad length'],
    ['inv_', 'bad length'],
    [valid.slice(0, -1), 'bad length'],
    [`${valid}x`, 'bad length'],
    ['inv_2e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi', 'unrecognized codec version'],
    ['dp_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi', "id doesn't match the expected type"],
    ['foo_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi', 'unrecognized resource type: foo'],
    ['inv_1e5LzHaWLYBg7Mif5X5Oik-kqq1YSVGOUi', 'base62 decode error'],
    [`inv_1${'Z'.repeat(11)}7Mif5X5OikFkqq1YSVGOUi`, 'base62 decode error'],
    ['_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi', 'unrecognized resource type: '],
    ['mut_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi', "id doesn't match the expected type"],
    ['snap_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi', "id doesn't match the expected type"],
    ['tst_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi', 'unrecognized resource type: tst'],
  ];
  for (const [s, reason] of cases) throwsIdError(t, () => parseInvocationId(s), reason, s);
  throwsIdError(t, () => invocationIdFromBytes(new Uint8Array(23)), 'bad length', '23 bytes');
});

test('newInvocationId: ULID-like uuid with the current ms timestamp first', (t) => {
  const before = Date.now();
  const a = newInvocationId(42n);
  const b = newInvocationId(42n);
  const after = Date.now();
  t.is(a.partitionKey, 42n);
  t.is(a.uuid.length, 16);
  t.notDeepEqual(a.uuid, b.uuid);
  const ms = Buffer.from(a.uuid).readUIntBE(0, 6);
  t.true(ms >= before && ms <= after);
  t.deepEqual(parseInvocationId(invocationIdToString(a)), a);
});

test('deterministicInvocationId reproduces the workflow-run id in the vectors', (t) => {
  // v6/v7 workflow-promise: Signup/wf1 run is inv_1j2qHrZ52MQW3QfeCDpd3UYcyv36p69SHn in both captures.
  const id = deterministicInvocationId(0x72cbd5803feac2ddn, ['wf', 'Signup', 'wf1']);
  t.is(invocationIdToString(id), 'inv_1j2qHrZ52MQW3QfeCDpd3UYcyv36p69SHn');
  t.deepEqual(
    deterministicInvocationId(1n, ['ik', 'S', 'h', 'k']),
    deterministicInvocationId(1n, ['ik', 'S', 'h', 'k']),
  );
  t.notDeepEqual(deterministicInvocationId(1n, ['wf', 'Signup', 'wf2']).uuid, id.uuid);
});

test('partition keys: stable per key, 64-bit, independent of anything but the key', (t) => {
  t.is(partitionKeyOf('k1'), partitionKeyOf('k1'));
  t.not(partitionKeyOf('k1'), partitionKeyOf('k2'));
  for (const k of ['', 'a', 'ü', 'x'.repeat(1000)]) {
    const pk = partitionKeyOf(k);
    t.true(pk >= 0n && pk < 2n ** 64n);
  }
});

test('an unkeyed id holds the time it was made where the store orders by it, in the partition its key names', (t) => {
  const readByRestate = (id: string) => {
    const key = Buffer.alloc(8);
    key.writeBigUInt64BE(parseInvocationId(id).partitionKey);
    return key.readBigUInt64LE(0);
  };
  const at = Date.parse('2026-11-29T10:00:00.123Z');
  for (const partitions of [1, 24, 1000]) {
    for (const partition of [0, Math.floor(partitions / 2), partitions - 1]) {
      const id = invocationIdToString(newInvocationId(keyInAt(partition, partitions, at)));
      t.is(partitionOfId(id, partitions), partition);
      t.is(readByRestate(id) >> 16n, BigInt(at));
    }
  }
  const any = invocationIdToString(newInvocationId(unkeyedPartitionKey(at)));
  t.is(readByRestate(any) >> 16n, BigInt(at));
  t.is(clockedPartitionKey(0xabcd, at) >> 48n, 0xabcdn);
});

test('the ids of a burst sit together in the store, among those of the ten minutes before', (t) => {
  const start = Date.parse('2026-11-29T10:00:00Z');
  const id = (at: number) => invocationIdToString(newInvocationId(keyInAt(5, 24, at)));
  const older = Array.from({ length: 10_000 }, (_, i) => ({ burst: false, id: id(start + i * 60) }));
  const burst = Array.from({ length: 1_000 }, (_, i) => ({ burst: true, id: id(start + 600_000 + i) }));
  const sorted = [...older, ...burst].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // A run: ids of the burst next to each other in the store's order. Random keys make ~1,000.
  const runs = sorted.filter((x, i) => x.burst && !sorted[i - 1]?.burst).length;
  t.true(runs <= 12, `${runs} runs`);
});

test('keyInAt keeps to its partition where no 16-bit prefix fits in one', (t) => {
  for (const partitions of [32_768, 40_000, 2 ** 20, 2 ** 24 + 3]) {
    for (const partition of [0, 1, Math.floor(partitions / 3), partitions - 1]) {
      const key = keyInAt(partition, partitions, Date.now());
      t.is(partitionOf(key, partitions), partition, `${partitions} partitions, partition ${partition}`);
    }
  }
});

// --- awakeable ids -----------------------------------------------------------------------------

test('awakeable vectors: the id the handler printed is Start.id of the waiter plus signal 17', (t) => {
  for (const name of ['v6/awakeable.json', 'v7/awakeable.json']) {
    const { exchanges } = vectors.find((v) => v.name === name)!;
    const waiter = exchanges.find((ex) => ex.note.startsWith('waiter'))!;
    const { id, debugId } = startOf(waiter);
    const proposal = waiter.messages.find((m) => m.type === 'ProposeRunCompletion')!;
    const printed = JSON.parse((proposal.decoded.value as { utf8: string }).utf8) as string;
    t.is(awakeableIdToString(fromHex(id), 17), printed, name);
    t.is(printed.length, 44);

    const parsed = parseAwakeableId(printed);
    t.is(parsed.kind, 'signal');
    t.is(parsed.kind === 'signal' ? parsed.signalIndex : -1, 17);
    t.is(invocationIdToString(parsed.invocationId), debugId);

    const completed = exchanges.flatMap((ex) => ex.messages).find((m) => m.type === 'CompleteAwakeableCommand')!.decoded
      .awakeable_id;
    t.is(completed, printed, `${name}: resolver used the same id`);
    const signal = exchanges.flatMap((ex) => ex.messages).find((m) => m.type === 'SignalNotification')!;
    t.is(signal.decoded.idx, 17);
  }
  t.is(
    awakeableIdToString(fromHex('2b2fe41b84ba0ff8ba8dc4829d808982688d5416316a61ab'), 17),
    'sign_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAAEQ',
  );
});

test('legacy prom_1 awakeable ids carry an entry index', (t) => {
  const parsed = parseAwakeableId('prom_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAAEQ');
  t.is(parsed.kind, 'entry');
  t.is(parsed.kind === 'entry' ? parsed.entryIndex : -1, 17);
  t.is(invocationIdToString(parsed.invocationId), 'inv_1liqmyz15urx5docOctm0sIS2JeZC9ra9I');
});

// What is no signal id is reported with why it is no `prom_` id either, as restate-server 1.7.12 answers.
test('parseAwakeableId errors match restate-server', (t) => {
  const cases: [string, IdErrorReason][] = [
    ['garbage', 'bad format'],
    ['', 'bad length'],
    ['inv_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAAEQ', "id doesn't match the expected type"],
    ['sign_2Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAAEQ', 'unrecognized codec version'],
    ['sign_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAA', "id doesn't match the expected type"],
    ['sign_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAAEQAA', "id doesn't match the expected type"],
    ['sign_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAAE!', "id doesn't match the expected type"],
    ['sign_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAAER', "id doesn't match the expected type"],
    ['prom_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAA', 'bad length'],
    ['prom_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAAE!', 'base62 decode error'],
    ['prom_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAAER', 'base62 decode error'],
    ['prom_2x', 'unrecognized codec version'],
    ['x_1abc', 'unrecognized resource type: x'],
  ];
  for (const [s, reason] of cases) throwsIdError(t, () => parseAwakeableId(s), reason, s);
  t.throws(() => awakeableIdToString(new Uint8Array(8), 17), { instanceOf: IdError });
});

// --- deployment ids ----------------------------------------------------------------------------

test('deployment ids: shape and round trip', (t) => {
  const example = 'dp_15mkDZVNLJ7axAH3QeEdtQt';
  t.is(deploymentIdToString(parseDeploymentId(example)), example);
  for (let i = 0; i < 50; i++) {
    const id = newDeploymentId();
    t.regex(id, /^dp_1[0-9a-zA-Z]{22}$/);
    t.is(deploymentIdToString(parseDeploymentId(id)), id);
  }
  t.not(newDeploymentId(), newDeploymentId());
});

test('parseDeploymentId errors match restate-server (reference-behavior.md §3.3)', (t) => {
  const cases: [string, IdErrorReason][] = [
    ['garbage', 'bad format'],
    ['dp_1234567890123456789012', 'bad length'],
    ['dp_15mkDZVNLJ7axAH3QeEdtQtX', 'bad length'],
    ['', 'bad length'],
    ['dp_nope', 'unrecognized codec version'],
    ['inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi', "id doesn't match the expected type"],
    ['_15mkDZVNLJ7axAH3QeEdtQt', 'unrecognized resource type: '],
    ['dp_15mkDZVNLJ7axAH3QeEd-Qt', 'base62 decode error'],
    ['dp_1zzzzzzzzzzzzzzzzzzzzzz', 'base62 decode error'],
  ];
  for (const [s, reason] of cases) throwsIdError(t, () => parseDeploymentId(s), reason, s);
});

test('subscription and virtual queue ids: the reasons restate-server 1.7.12 gives', (t) => {
  const subscriptions: [string, IdErrorReason][] = [
    ['sub_1abc!defghijklmnopqrstuv', 'base62 decode error'],
    ['sub_1abcdefghijklmnopqrstuvw', 'base62 decode error'],
    ['sub_2abc', 'unrecognized codec version'],
    ['sub_', 'bad length'],
    ['inv_1abc', "id doesn't match the expected type"],
  ];
  for (const [s, reason] of subscriptions) throwsIdError(t, () => parseU128Id(s, 'sub'), reason, s);
  t.notThrows(() => parseU128Id('sub_17hdUi783eTanc5O0FoCdUd', 'sub'));
  // A queue id's whole length is checked before its digits.
  const queues: [string, IdErrorReason][] = [
    ['vq_nope', 'unrecognized codec version'],
    ['vq_1abc', 'bad length'],
    ['vq_1abc!defghijklmnopqrstuvwxyzABCDEFGHI', 'bad length'],
    ['vq_1abc!defghijklmnopqrstuvwxyzABCDEF', 'base62 decode error'],
    [`vq_1${'z'.repeat(33)}`, 'base62 decode error'],
    [`vq_1${'0'.repeat(34)}`, 'bad length'],
    ['x_1', 'unrecognized resource type: x'],
    ['inv_1abc', "id doesn't match the expected type"],
  ];
  for (const [s, reason] of queues) throwsIdError(t, () => checkVqueueIdForm(s), reason, s);
  t.notThrows(() => checkVqueueIdForm(`vq_1${'0'.repeat(33)}`));
  t.notThrows(() => checkVqueueIdForm('vq_15XrKI6E8WY65oc96raHL64V3Bk03Ao6MS'));
});

test('partitionOfId places an id as partitionOf places its key, and refuses what parseInvocationId refuses', (t) => {
  const max = 2n ** 64n - 1n;
  const keys = [0n, 1n, max, max - 1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 63n];
  let seed = 7n;
  for (let i = 0; i < 500; i++) keys.push((seed = (seed * 6364136223846793005n + 1442695040888963407n) & max));
  for (const partitions of [1, 3, 24, 1000, 65_535, 2 ** 21 - 1, 2 ** 21, 2 ** 22]) {
    // The first key of each of a few partitions, and the one before it: the edges of the ranges.
    const n = BigInt(partitions);
    const edges = [1n, n / 2n, n - 1n].flatMap((p) => {
      const first = (p * 2n ** 64n + n - 1n) / n;
      return [first, first - 1n];
    });
    for (const key of [...keys, ...edges.filter((k) => k >= 0n && k <= max)]) {
      const id = invocationIdToString({ partitionKey: key, uuid: new Uint8Array(16).fill(7) });
      t.is(partitionOfId(id, partitions), partitionOf(key, partitions), `key ${key}, ${partitions} partitions`);
    }
  }
  for (const bad of ['', 'not-an-id', 'inv_123', 'dp_1abc', 'inv_1' + '!'.repeat(33), 'inv_2' + '0'.repeat(33)]) {
    const expected = t.throws(() => parseInvocationId(bad), { instanceOf: IdError });
    t.throws(() => partitionOfId(bad, 24), { instanceOf: IdError, message: expected.message });
  }
});
