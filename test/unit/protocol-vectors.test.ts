/**
 * Replays every captured exchange in test/fixtures/protocol-vectors/{v6,v7} through the framing
 * and message codecs: frames split correctly however the bytes are chunked, every payload
 * decodes to what the capture's `decoded` says, and re-encoding is byte-identical.
 */
import test, { type ExecutionContext } from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { FrameDecoder, encodeFrame, type Frame } from '../../src/protocol/framing.js';
import { MessageType, codecFor, isNotification, messageName } from '../../src/protocol/messages.js';
import { fixturePath } from '../support/fixtures.js';

const VECTORS = fixturePath('protocol-vectors');

interface VectorMessage {
  dir: 'server->sdk' | 'sdk->server';
  type_id: string;
  type: string;
  flags: string;
  length: number;
  header_hex: string;
  payload_hex: string;
  decoded: Record<string, unknown>;
}
interface VectorFile {
  scenario: string;
  protocol_version: number;
  exchanges: { attempt: number; note: string; messages: VectorMessage[] }[];
}

const files = ['v6', 'v7'].flatMap((dir) =>
  readdirSync(path.join(VECTORS, dir))
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({
      name: `${dir}/${f}`,
      vector: JSON.parse(readFileSync(path.join(VECTORS, dir, f), 'utf8')) as VectorFile,
    })),
);

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const fromHex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));

// --- Turning the capture's protobufjs-style JSON into our representation ---------------------

/** uint64 fields, printed as decimal strings in the capture. */
const U64_NUMBER = new Set(['wake_up_time', 'invoke_time', 'duration_since_last_stored_entry', 'next_retry_delay']);
const ENUMS: Record<string, Record<string, number>> = {
  combinator_type: {
    COMBINATOR_TYPE_UNKNOWN: 0,
    FIRST_COMPLETED: 1,
    ALL_COMPLETED: 2,
    FIRST_SUCCEEDED_OR_ALL_FAILED: 3,
    ALL_SUCCEEDED_OR_FIRST_FAILED: 4,
  },
  behavior: { RETRY: 0, PAUSE: 1, FAIL: 2 },
};
/** Fields whose type is a Value wrapper; `{}` there is an empty Value. */
const VALUE_FIELDS = new Set(['value', 'completion_value']);

const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bytesOf(v: unknown): Uint8Array {
  if (isRecord(v) && typeof v.hex === 'string') return fromHex(v.hex);
  throw new Error(`not a bytes field: ${JSON.stringify(v)}`);
}

function expected(key: string, v: unknown, type: string): unknown {
  if (key === 'void') return true;
  if (key === 'random_seed') return BigInt(v as string);
  if (U64_NUMBER.has(key)) return Number(v);
  const en = ENUMS[key];
  if (en !== undefined) return en[v as string];
  if (Array.isArray(v)) return v.map((item) => expected(key, item, type));
  if (!isRecord(v)) return v;
  if (typeof v.hex === 'string') return fromHex(v.hex);
  if (Array.isArray(v.keys)) return v.keys.map(bytesOf); // StateKeys
  if (VALUE_FIELDS.has(key) && type !== 'ProposeRunCompletion') {
    return v.content === undefined ? new Uint8Array(0) : bytesOf(v.content);
  }
  return normalize(v, type);
}

function normalize(decoded: Record<string, unknown>, type: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(decoded)) {
    // SignalNotification names the shared signal_id field `idx`.
    const name = type === 'SignalNotification' && k === 'idx' ? 'signalId' : camel(k);
    out[name] = expected(k, v, type);
  }
  return out;
}

/** A JSON-able view that keeps bytes, bigints and presence distinguishable. */
function canonical(v: unknown): unknown {
  if (v instanceof Uint8Array) return `bytes:${hex(v)}`;
  if (typeof v === 'bigint') return `bigint:${v}`;
  if (Array.isArray(v)) return v.map(canonical);
  if (isRecord(v)) {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical(v[k])]),
    );
  }
  return v;
}

function isDefault(v: unknown): boolean {
  return (
    v === 0 ||
    v === '' ||
    v === false ||
    v === 0n ||
    (Array.isArray(v) && v.length === 0) ||
    (v instanceof Uint8Array && v.length === 0)
  );
}

/** Fields the capture omits are proto3 defaults; everything it shows must match exactly. */
function withoutDefaults(v: unknown, keep: Record<string, unknown>): unknown {
  if (!isRecord(v) || v instanceof Uint8Array) return v;
  const out: Record<string, unknown> = {};
  for (const [k, item] of Object.entries(v)) {
    const sub = keep[k];
    if (!(k in keep) && isDefault(item)) continue;
    if (Array.isArray(item) && Array.isArray(sub)) {
      out[k] = item.map((x, i) => withoutDefaults(x, isRecord(sub[i]) ? sub[i] : {}));
    } else out[k] = isRecord(item) ? withoutDefaults(item, isRecord(sub) ? sub : {}) : item;
  }
  return out;
}

// --- Checks --------------------------------------------------------------------------------

function framesOf(bytes: Uint8Array, chunkSize: number): Frame[] {
  const decoder = new FrameDecoder();
  const frames: Frame[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) frames.push(...decoder.push(bytes.subarray(i, i + chunkSize)));
  frames.push(...decoder.push(new Uint8Array(0)));
  if (decoder.pendingBytes !== 0) throw new Error(`${decoder.pendingBytes} bytes left over`);
  return frames;
}

function checkStream(t: ExecutionContext, label: string, messages: VectorMessage[]): void {
  const body = Buffer.concat(messages.map((m) => Buffer.from(m.header_hex + m.payload_hex, 'hex')));
  for (const chunkSize of [body.length || 1, 1, 7, 8, 9, 13, 4096]) {
    const frames = framesOf(body, chunkSize);
    t.deepEqual(
      frames.map((f) => [f.type, f.flags, hex(f.payload)]),
      messages.map((m) => [Number(m.type_id), Number(m.flags), m.payload_hex]),
      `${label}: frames with chunk size ${chunkSize}`,
    );
  }
}

function checkMessage(t: ExecutionContext, label: string, m: VectorMessage): void {
  const type = Number(m.type_id);
  const flags = Number(m.flags);
  const payload = fromHex(m.payload_hex);
  t.is(messageName(type), m.type, `${label}: name`);
  t.is(payload.length, m.length, `${label}: length`);
  t.is(encodeFrame(type, payload, flags).toString('hex'), m.header_hex + m.payload_hex, `${label}: frame`);

  const codec = codecFor(type);
  if (codec === undefined) return void t.fail(`${label}: no codec for ${m.type_id}`);
  const decoded = codec.decode(payload);
  const want = normalize(m.decoded, m.type);
  t.deepEqual(canonical(withoutDefaults(decoded, want)), canonical(want), `${label}: decoded fields`);

  const again = codec.encode(decoded);
  t.deepEqual(canonical(codec.decode(again)), canonical(decoded), `${label}: re-encoded decodes the same`);
  t.is(hex(again), m.payload_hex, `${label}: re-encoding is byte-identical`);
}

for (const { name, vector } of files) {
  test(`${name}: frames and messages`, (t) => {
    t.true(vector.exchanges.length > 0);
    for (const [i, ex] of vector.exchanges.entries()) {
      for (const dir of ['server->sdk', 'sdk->server'] as const) {
        const label = `${name} exchange ${i + 1} ${dir}`;
        const messages = ex.messages.filter((m) => m.dir === dir);
        checkStream(t, label, messages);
        messages.forEach((m, j) => checkMessage(t, `${label} #${j + 1} ${m.type}`, m));
      }
    }
  });
}

test('every message type id is covered by a codec, and the vectors exercise most of them', (t) => {
  const seen = new Set(files.flatMap((f) => f.vector.exchanges.flatMap((e) => e.messages.map((m) => m.type))));
  for (const [name, id] of Object.entries(MessageType)) {
    t.truthy(codecFor(id), name);
    t.is(messageName(id), name);
  }
  // Not captured: attach/get-output/send-signal commands and their notifications, CommandAck.
  t.true(seen.size >= 34, `only ${seen.size} types seen`);
  t.true([...seen].every((n) => n in MessageType));
  t.true(isNotification(MessageType.SignalNotification));
});

// --- Edge cases the captures do not cover ---------------------------------------------------

test('FrameDecoder: empty payloads, truncation, and the size limit', (t) => {
  const end = encodeFrame(MessageType.End, new Uint8Array(0));
  t.is(end.toString('hex'), '0003000000000000');
  const decoder = new FrameDecoder(10);
  t.deepEqual(
    decoder.push(Buffer.concat([end, end, end.subarray(0, 5)])).map((f) => [f.type, f.payload.length]),
    [
      [3, 0],
      [3, 0],
    ],
  );
  t.is(decoder.pendingBytes, 5);
  t.is(decoder.push(end.subarray(5)).length, 1);
  t.is(decoder.pendingBytes, 0);
  t.notThrows(() => decoder.push(encodeFrame(MessageType.RunCommand, new Uint8Array(10))));
  const err = t.throws(() => decoder.push(encodeFrame(MessageType.RunCommand, new Uint8Array(11))));
  t.is(err?.name, 'FrameError');
  t.is(new FrameDecoder().maxPayloadLength, 32 * 1024 * 1024);
});

test('unknown fields of every wire type are skipped (§5)', (t) => {
  const run = fromHex('5801620473746570'); // RunCommand {resultCompletionId 1, name "step"}
  const unknown = fromHex(
    [
      'f80107', // #31 varint
      'f901' + '0102030405060708', // #31 fixed64
      'fa0103616263', // #31 length-delimited
      'fd01' + '01020304', // #31 fixed32
      'fb01' + '0801' + 'fc01', // #31 group with a varint inside
    ].join(''),
  );
  const codec = codecFor(MessageType.RunCommand)!;
  t.deepEqual(codec.decode(Buffer.concat([unknown, run])), { resultCompletionId: 1, name: 'step' });
  t.deepEqual(codec.decode(Buffer.concat([run, unknown])), { resultCompletionId: 1, name: 'step' });
  t.throws(() => codec.decode(fromHex('5801620573746570')), { name: 'ProtoError' });
});

test('presence: zero ids and empty values survive a round trip; repeated varints also read unpacked', (t) => {
  const n = codecFor(MessageType.RunCompletionNotification)!;
  const bytes = n.encode({ completionId: 0, value: new Uint8Array(0) });
  t.is(hex(bytes), '08002a00');
  t.deepEqual(n.decode(bytes), { completionId: 0, value: new Uint8Array(0) });
  t.deepEqual(n.decode(fromHex('10012200')), { signalId: 1, void: true });

  const s = codecFor(MessageType.Suspension)!;
  t.deepEqual(s.decode(fromHex('080108021a01611203010203')), {
    waitingCompletions: [1, 2],
    waitingSignals: [1, 2, 3],
    waitingNamedSignals: ['a'],
  });
});

test('long fields, multi-byte lengths, 64-bit values and failure metadata round-trip', (t) => {
  const start = codecFor(MessageType.Start)!;
  const m = {
    id: new Uint8Array(24).fill(7),
    debugId: 'inv_x',
    knownEntries: 300,
    stateMap: [
      { key: Buffer.from('big'), value: new Uint8Array(70_000).fill(1) },
      { key: Buffer.from('empty'), value: new Uint8Array(0) },
    ],
    partialState: true,
    key: 'ключ 🔑',
    retryCountSinceLastStoredEntry: 2 ** 32 - 1,
    durationSinceLastStoredEntry: Number.MAX_SAFE_INTEGER,
    randomSeed: 2n ** 64n - 1n,
    scope: '',
  };
  t.deepEqual(canonical(start.decode(start.encode(m))), canonical(m));

  const out = codecFor(MessageType.OutputCommand)!;
  const failure = { code: 418, message: 'x'.repeat(200), metadata: [{ key: 'why', value: 'test' }] };
  t.deepEqual(out.decode(out.encode({ failure, name: '' })), { failure, name: '' });
});

test('attach targets, including the scope field number used by some sdk-shared-core builds', (t) => {
  const c = codecFor(MessageType.AttachInvocationCommand)!;
  const m = {
    idempotentRequestTarget: { serviceName: 'S', serviceKey: '', handlerName: 'h', idempotencyKey: 'k', scope: 'sc' },
    resultCompletionId: 3,
    name: '',
  };
  t.deepEqual(c.decode(c.encode(m)), m);
  // WorkflowTarget {workflow_name "W", workflow_key "k", scope(#7) "sc"}
  t.deepEqual(c.decode(fromHex('220a0a015712016b3a0273635803')), {
    workflowTarget: { workflowName: 'W', workflowKey: 'k', scope: 'sc' },
    resultCompletionId: 3,
    name: '',
  });
});
