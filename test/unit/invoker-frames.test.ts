/**
 * invoker/frames.ts on its own: what one batch of SDK frames becomes (journal entries, machine
 * events, timers, outbox messages, state writes, acks), fed with the frames SDK 1.17.2 sent
 * restate-server 1.7.12 (test/fixtures/protocol-vectors/), against a real embedded store. What
 * restate-server answered in those exchanges is the expected answer, byte for byte.
 */
import type { ExecutionContext } from 'ava';
import type { AttemptFailure, InvocationEvent } from '../../machines/invocation.js';
import { RuntimeCode, ProtocolCode } from '../../src/errors.js';
import type { Frame } from '../../src/protocol/framing.js';
import {
  CombinatorType,
  decodeNotification,
  encodeError,
  encodeSetStateCommand,
  ErrorBehavior,
  MessageType,
} from '../../src/protocol/messages.js';
import { readBatch, type Batch } from '../../src/runtime/invoker/frames.js';
import type { JournalEntry } from '../../src/store/types.js';
import { timerOf } from '../../src/model/timers.js';
import {
  base64,
  entryOf,
  hex,
  invokerTest,
  recorded,
  scopeOf,
  type InvokerWorld,
  type Recorded,
} from '../support/invoker-fixture.js';

const test = invokerTest();

const NOW = 7_000;

/** One batch of the exchange's frames, read as an attempt at this protocol version reads it. */
function read(
  t: ExecutionContext<InvokerWorld>,
  ex: Recorded,
  frames: Frame[],
  opts: { version?: number; storedOutput?: JournalEntry } = {},
) {
  return readBatch(frames, {
    scope: scopeOf(t.context, ex),
    protocolVersion: opts.version ?? 6,
    now: NOW,
    storedOutput: () => opts.storedOutput,
  });
}

const types = (entries: JournalEntry[]) => entries.map((e) => e.type);

function onlyEvent(t: ExecutionContext, b: Batch): InvocationEvent {
  t.is(b.events.length, 1, 'one machine event per batch that ends the attempt');
  return b.events[0]!;
}

function failureOf(t: ExecutionContext, b: Batch): AttemptFailure {
  const e = onlyEvent(t, b);
  if (e.type !== 'attemptFailed') throw new Error(`expected attemptFailed, got ${e.type}`);
  return e.failure;
}

// --- Run proposals and End ---------------------------------------------------------------------

test('v6 greeter-run: a ctx.run and its result, Output and End are one batch that completes the invocation', async (t) => {
  const ex = recorded('v6/greeter-run#1');
  const b = await read(t, ex, ex.sdk);
  t.deepEqual(types(b.entries), [
    MessageType.RunCommand,
    MessageType.RunCompletionNotification,
    MessageType.OutputCommand,
  ]);
  t.is(
    hex(b.entries[1]!.payload),
    hex(ex.answered('RunCompletionNotification')),
    'the run completion restate-server stored and echoed',
  );
  t.deepEqual(b.events, [{ type: 'complete', completion: { ok: base64('"hi alice"') }, now: NOW }]);
  t.true(b.ended);
  t.false(b.failed);
  t.deepEqual(b.acks, [], 'v6 has no acks: the completion itself goes back to the SDK');
  t.deepEqual([b.timersAdd, b.outboxAdd, b.state, b.attachWaits], [[], [], [], []]);
});

test('v7 greeter-run: a run proposal with the requested-ack flag is acked, not echoed; AwaitingOn is not stored', async (t) => {
  const ex = recorded('v7/greeter-run#1');
  t.is(ex.sent('ProposeRunCompletion').flags, 0x8000);
  const b = await read(t, ex, ex.sdk, { version: 7 });
  t.deepEqual(types(b.entries), [
    MessageType.RunCommand,
    MessageType.RunCompletionNotification,
    MessageType.OutputCommand,
  ]);
  t.deepEqual(b.acks, [1], 'the offset in this batch of the run completion to ack');
  t.like(decodeNotification(b.entries[1]!.payload), {
    completionId: decodeNotification(ex.answered('ProposeRunCompletionAck')).completionId,
  });
  t.deepEqual(b.events, [{ type: 'complete', completion: { ok: base64('"hi alice"') }, now: NOW }]);

  const asV6 = await read(t, ex, ex.sdk, { version: 6 });
  t.deepEqual(asV6.acks, [], 'the flag means nothing before v7');
});

test('run-terminal-failure: a proposed failure is stored as the run completion, like a value', async (t) => {
  const ex = recorded('v6/run-terminal-failure#1');
  const b = await read(t, ex, ex.sdk);
  t.deepEqual(types(b.entries), [
    MessageType.RunCommand,
    MessageType.RunCompletionNotification,
    MessageType.OutputCommand,
  ]);
  t.deepEqual(decodeNotification(b.entries[1]!.payload), {
    completionId: 1,
    failure: { code: 422, message: 'run says no' },
  });
  t.deepEqual(b.events, [{ type: 'complete', completion: { ok: base64('"caught run says no"') }, now: NOW }]);
});

test('End completes with the Output of an earlier batch; End with no Output anywhere fails the attempt', async (t) => {
  const ex = recorded('v6/greeter-run#1');
  const first = await read(t, ex, ex.sdk.slice(0, 3));
  t.false(first.ended, 'Output alone does not end the attempt');
  t.deepEqual(first.events, []);

  const end = [ex.sent('End')];
  const later = await read(t, ex, end, { storedOutput: entryOf(ex.sent('OutputCommand')) });
  t.deepEqual(later.entries, []);
  t.deepEqual(later.events, [{ type: 'complete', completion: { ok: base64('"hi alice"') }, now: NOW }]);

  const bare = await read(t, ex, end);
  t.deepEqual(bare.events, [
    {
      type: 'attemptFailed',
      failure: {
        errorCode: RuntimeCode.retryableServiceError,
        code: ProtocolCode.protocolViolation,
        message: 'the SDK sent End without an Output command',
      },
      now: NOW,
    },
  ]);
  t.true(bare.ended);
  t.true(bare.failed);
});

test('terminal-error: an Output failure completes with that failure', async (t) => {
  const ex = recorded('v6/terminal-error#1');
  const b = await read(t, ex, ex.sdk);
  t.deepEqual(types(b.entries), [MessageType.OutputCommand]);
  const e = onlyEvent(t, b);
  t.is(e.type, 'complete');
  t.like(e, { completion: { failure: { code: 400, message: 'bad input' } } });
  t.false(b.failed, 'a terminal error is a completion, not a failed attempt');
});

// --- Suspension --------------------------------------------------------------------------------

test('v6 sleep-suspend-resume: the sleep is a timer owned by the invocation; Suspension lists what it waits for', async (t) => {
  const ex = recorded('v6/sleep-suspend-resume#1');
  const b = await read(t, ex, ex.sdk);
  t.deepEqual(types(b.entries), [
    MessageType.RunCommand,
    MessageType.RunCompletionNotification,
    MessageType.SleepCommand,
  ]);
  t.deepEqual(b.timersAdd, [{ ...timerOf.sleep(ex.invocationId, 2), dueAt: 1795311714183 }]);
  t.is(b.timersAdd[0]!.owner, ex.invocationId);
  t.deepEqual(b.events, [
    { type: 'suspend', awaiting: { completions: [2], signals: [1], namedSignals: [] }, now: NOW },
  ]);
  t.true(b.ended);
  t.false(b.failed);
});

test('v6 awakeable: a suspension on signals (the awakeable is signal 17, CANCEL is 1)', async (t) => {
  const ex = recorded('v6/awakeable#1');
  const b = await read(t, ex, ex.sdk);
  t.deepEqual(b.events, [
    { type: 'suspend', awaiting: { completions: [], signals: [17, 1], namedSignals: [] }, now: NOW },
  ]);
});

test('v7 combinators: the Suspension future tree is kept whole; both sleeps of all() are timers', async (t) => {
  const ex = recorded('v7/combinators#1');
  const b = await read(t, ex, ex.sdk, { version: 7 });
  t.deepEqual(types(b.entries), [MessageType.SleepCommand, MessageType.SleepCommand]);
  t.deepEqual(
    b.timersAdd.map((x) => x.key),
    [timerOf.sleep(ex.invocationId, 1).key, timerOf.sleep(ex.invocationId, 2).key],
  );
  t.deepEqual(b.events, [
    {
      type: 'suspend',
      awaiting: {
        completions: [],
        signals: [],
        namedSignals: [],
        future: {
          waitingCompletions: [],
          waitingSignals: [1],
          waitingNamedSignals: [],
          nestedFutures: [
            {
              waitingCompletions: [1, 2],
              waitingSignals: [],
              waitingNamedSignals: [],
              nestedFutures: [],
              combinatorType: CombinatorType.AllSucceededOrFirstFailed,
            },
          ],
          combinatorType: CombinatorType.FirstCompleted,
        },
      },
      now: NOW,
    },
  ]);
});

// --- Error -------------------------------------------------------------------------------------

test('run-retry: Error carries code, message, stacktrace and the related command; the Run before it is kept', async (t) => {
  const ex = recorded('v6/run-retry#1');
  const b = await read(t, ex, ex.sdk);
  t.deepEqual(types(b.entries), [MessageType.RunCommand], 'stored with the failure (Start field 7 counts from there)');
  const { stacktrace, ...rest } = failureOf(t, b);
  t.deepEqual(rest, {
    errorCode: RuntimeCode.retryableServiceError,
    code: 500,
    message: 'run failed attempt 1',
    relatedCommandIndex: 1,
    relatedCommandName: 'flaky-step',
    relatedCommandType: MessageType.RunCommand,
    behavior: 'retry',
  });
  t.true(stacktrace?.startsWith('Error: run failed attempt 1\n'));
  t.true(b.ended);
  t.true(b.failed);
});

test('retryable-error-retry: a run result and an Error in one batch: the result is stored, the attempt failed', async (t) => {
  const ex = recorded('v6/retryable-error-retry#1');
  const b = await read(t, ex, ex.sdk);
  t.deepEqual(types(b.entries), [MessageType.RunCommand, MessageType.RunCompletionNotification]);
  t.like(failureOf(t, b), { code: 500, message: 'transient failure attempt 1', behavior: 'retry' });
  t.true(b.failed);
});

test('retry-after-delay: next_retry_delay is passed on; no related command when the SDK names none', async (t) => {
  const ex = recorded('v6/retry-after-delay#1');
  const failure = failureOf(t, await read(t, ex, ex.sdk));
  t.like(failure, { code: 500, message: 'try later', nextRetryDelay: 300, behavior: 'retry' });
  t.false('relatedCommandIndex' in failure);
  t.false('relatedCommandName' in failure);
});

test('v7 pause-run: behavior PAUSE becomes pause; FAIL (not captured) becomes fail', async (t) => {
  const ex = recorded('v7/pause-run#1');
  const paused = failureOf(t, await read(t, ex, ex.sdk, { version: 7 }));
  t.like(paused, { message: 'need a human', behavior: 'pause', relatedCommandName: 'needs-human' });

  const payload = encodeError({ code: 500, message: 'no', stacktrace: '', behavior: ErrorBehavior.Fail });
  const failed = failureOf(t, await read(t, ex, [{ type: MessageType.Error, flags: 0, payload }], { version: 7 }));
  t.like(failed, { behavior: 'fail' });
  t.false('stacktrace' in failed, 'an empty stacktrace is left out');
});

// --- Commands in a batch -----------------------------------------------------------------------

test('object-lazy-state: a lazy read, a write, then a keys read: the keys read sees the write of its own batch', async (t) => {
  const ex = recorded('v6/object-lazy-state#1');
  const b = await read(t, ex, ex.sdk);
  t.deepEqual(types(b.entries), [
    MessageType.GetLazyStateCommand,
    MessageType.GetLazyStateCompletionNotification,
    MessageType.SetStateCommand,
    MessageType.GetLazyStateKeysCommand,
    MessageType.GetLazyStateKeysCompletionNotification,
    MessageType.OutputCommand,
  ]);
  t.is(
    hex(b.entries[1]!.payload),
    hex(ex.answered('GetLazyStateCompletionNotification')),
    'void, as restate-server answered',
  );
  t.is(
    hex(b.entries[4]!.payload),
    hex(ex.answered('GetLazyStateKeysCompletionNotification')),
    '["count"], as restate-server answered',
  );
  t.deepEqual(b.state, [{ op: 'set', key: 'count', value: new Uint8Array(Buffer.from('1')) }]);
  t.like(onlyEvent(t, b), { type: 'complete' });
});

test('call-and-send: each call is stored with its invocation-id notification right after it, and one outbox message', async (t) => {
  const ex = recorded('v6/call-and-send#1');
  const b = await read(t, ex, ex.sdk);
  t.deepEqual(types(b.entries), [
    MessageType.CallCommand,
    MessageType.CallInvocationIdCompletionNotification,
    MessageType.OneWayCallCommand,
    MessageType.CallInvocationIdCompletionNotification,
    MessageType.OneWayCallCommand,
    MessageType.CallInvocationIdCompletionNotification,
    MessageType.CallCommand,
    MessageType.CallInvocationIdCompletionNotification,
    MessageType.OutputCommand,
  ]);
  t.deepEqual(
    b.outboxAdd.map((m) => m.id),
    [0, 1, 2, 3].map((n) => `${ex.invocationId}:1:${n}`),
    'message ids from the batch, unique and stable',
  );
  const ids = b.entries
    .filter((e) => e.type === MessageType.CallInvocationIdCompletionNotification)
    .map((e) => decodeNotification(e.payload));
  t.deepEqual(
    ids.map((n) => n.completionId),
    [1, 3, 4, 5],
    'the completion ids restate-server answered on',
  );
  t.deepEqual(
    ids.map((n) => n.invocationId),
    b.outboxAdd.map((m) => (m.body as { invocationId: string }).invocationId),
  );
});

test('a command the server refuses fails the attempt: what came before is stored, the command is not', async (t) => {
  // Counter/add's frames as if sent by a plain service's handler.
  const ex = { ...recorded('v6/object-eager-state#1'), path: '/invoke/Greeter/greet' };
  const b = await read(t, ex, ex.sdk);
  t.deepEqual(types(b.entries), [MessageType.GetEagerStateCommand]);
  t.deepEqual(b.state, []);
  t.deepEqual(b.events, [
    {
      type: 'attemptFailed',
      failure: {
        errorCode: RuntimeCode.retryableServiceError,
        code: ProtocolCode.protocolViolation,
        message: 'state commands are not allowed in a plain service handler',
      },
      now: NOW,
    },
  ]);
  t.true(b.failed);
});

// --- What an SDK must not send -----------------------------------------------------------------

test('a message the SDK must not send fails the attempt as a protocol violation, naming its type', async (t) => {
  const ex = recorded('v6/greeter-run#1');
  const run = ex.sent('RunCommand');
  for (const [type, name] of [
    [MessageType.Start, '0x0'],
    [MessageType.CommandAck, '0x4'],
    [MessageType.ProposeRunCompletionAck, '0x7'],
    [MessageType.RunCompletionNotification, '0x8011'],
    [0x03ff, '0x3ff'],
  ] as const) {
    const b = await read(t, ex, [run, { type, flags: 0, payload: new Uint8Array() }]);
    t.deepEqual(types(b.entries), [MessageType.RunCommand], name);
    t.like(failureOf(t, b), {
      code: ProtocolCode.protocolViolation,
      message: `unexpected message ${name} from the SDK`,
    });
    t.true(b.failed);
  }
  const input = { type: MessageType.InputCommand, flags: 0, payload: new Uint8Array() };
  t.like(failureOf(t, await read(t, ex, [input])), {
    code: ProtocolCode.protocolViolation,
    message: 'the SDK must not send an Input command',
  });
});

test('frames after End, Suspension or Error are not read', async (t) => {
  const ex = recorded('v6/greeter-run#1');
  const run = ex.sent('RunCommand');
  const b = await read(t, ex, [...ex.sdk, run]);
  t.deepEqual(types(b.entries), [
    MessageType.RunCommand,
    MessageType.RunCompletionNotification,
    MessageType.OutputCommand,
  ]);
  const afterError = await read(t, ex, [...recorded('v6/retry-after-delay#1').sdk, ...ex.sdk]);
  t.deepEqual(afterError.entries, []);
  t.is(afterError.events.length, 1);
});

test('custom entries (0xFC00 and up) are stored as they came, undecoded', async (t) => {
  const ex = recorded('v6/greeter-run#1');
  const custom = { type: 0xfc01, flags: 0, payload: new Uint8Array([1, 2, 3]) };
  const b = await read(t, ex, [custom]);
  t.deepEqual(b.entries, [{ type: 0xfc01, payload: new Uint8Array([1, 2, 3]) }]);
  t.false(b.ended);
});

test('a payload that does not decode fails the attempt as a protocol violation, whatever its type', async (t) => {
  const ex = recorded('v6/object-lazy-state#1');
  const set = encodeSetStateCommand({ key: Buffer.from('count'), value: Buffer.from('1'), name: '' });
  // The first 4 bytes of each payload: a field's tag or length with what it announces missing.
  const cut = (type: number, payload: Uint8Array) => ({ type, flags: 0, payload: payload.subarray(0, 4) });
  for (const frame of [
    cut(MessageType.SetStateCommand, set),
    cut(MessageType.GetLazyStateCommand, ex.sent('GetLazyStateCommand').payload),
    cut(MessageType.ProposeRunCompletion, recorded('v6/greeter-run#1').sent('ProposeRunCompletion').payload),
    cut(MessageType.Suspension, recorded('v7/combinators#1').sent('Suspension').payload),
    cut(MessageType.Error, recorded('v6/run-retry#1').sent('Error').payload),
  ]) {
    const b = await read(t, ex, [ex.sent('SetStateCommand'), frame]);
    t.deepEqual(types(b.entries), [MessageType.SetStateCommand], `0x${frame.type.toString(16)}`);
    const failure = failureOf(t, b);
    t.is(failure.code, ProtocolCode.protocolViolation);
    t.regex(failure.message, /^malformed \w+ from the SDK: truncated message$/);
    t.true(b.failed);
  }
});
