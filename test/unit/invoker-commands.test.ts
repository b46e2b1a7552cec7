/**
 * invoker/commands/ on its own: what storing one SDK command implies (state writes and reads,
 * calls with their lineage, one-way sends, signals, attach and get-output, sleep), fed with
 * the commands SDK 1.17.2 sent restate-server 1.7.12 (test/fixtures/protocol-vectors/) where the
 * captures have them, and encoded here where they do not (attach, get-output, SendSignal, an
 * idempotency key on a send). Reads go to a real embedded store and a registry holding the
 * recorded deployment. Durable promises: invoker-promises.test.ts.
 */
import type { ExecutionContext } from 'ava';
import { ProtocolCode } from '../../src/errors.js';
import { idempotentInvocationId, workflowRunId } from '../../src/model/ids.js';
import type { OutboxBody } from '../../src/model/outbox.js';
import { storedService } from '../../src/model/state-owner.js';
import { timerOf } from '../../src/model/timers.js';
import { invocationIdToString, newInvocationId, parseInvocationId, partitionKeyOf } from '../../src/protocol/ids.js';
import {
  decodeNotification,
  encodeAttachInvocationCommand,
  encodeCallCommand,
  encodeCompleteAwakeableCommand,
  encodeGetInvocationOutputCommand,
  encodeOneWayCallCommand,
  encodeSendSignalCommand,
  MessageType,
  type AttachInvocationCommand,
} from '../../src/protocol/messages.js';
import {
  CommandRejected,
  commandOutcome,
  PROMISE_COMMANDS,
  type CommandOutcome,
  type TargetOutcome,
} from '../../src/runtime/invoker/commands/index.js';
import type { JournalEntry, StateOp } from '../../src/store/types.js';
import {
  base64,
  bytes,
  entryOf,
  hex,
  invokerTest,
  recorded,
  scopeOf,
  type InvokerWorld,
  type Recorded,
} from '../support/invoker-fixture.js';

const test = invokerTest();

type T = ExecutionContext<InvokerWorld>;

const nothing = (): CommandOutcome => ({ notifications: [], timersAdd: [], outbox: [], state: [], attachWaits: [] });

/** The state a keyed exchange's object holds, as a commit of its own partition stores it. */
async function storeState(t: T, ex: Recorded, ops: StateOp[], scope?: string) {
  const s = scopeOf(t.context, ex);
  const service = storedService({ service: s.target.service, ...(scope !== undefined ? { scope } : {}) });
  await t.context.store.commit({ partition: s.partition, state: [{ service, key: ex.key, ops }] });
}

const rejection = (code: number, message: string) => ({ instanceOf: CommandRejected, message, code }) as const;

// --- Sleep, and commands that imply nothing else -----------------------------------------------

test('sleep: a timer due at the wake-up time, keyed by its completion and owned by the invocation', async (t) => {
  const ex = recorded('v6/sleep-suspend-resume#1');
  const out = await commandOutcome(scopeOf(t.context, ex), entryOf(ex.sent('SleepCommand')));
  t.deepEqual(out, {
    ...nothing(),
    timersAdd: [{ key: timerOf.sleep(ex.invocationId, 2).key, owner: ex.invocationId, dueAt: 1795311714183 }],
  });
});

test('Run, Output, eager state reads and custom entries are stored and replayed, nothing more', async (t) => {
  const eager = recorded('v6/object-eager-state#4');
  const scope = scopeOf(t.context, eager);
  t.deepEqual(await commandOutcome(scope, entryOf(eager.sent('GetEagerStateKeysCommand'))), nothing());
  t.deepEqual(await commandOutcome(scope, entryOf(eager.sent('OutputCommand'))), nothing());
  t.deepEqual(
    await commandOutcome(scope, entryOf(recorded('v6/object-eager-state#1').sent('GetEagerStateCommand'))),
    nothing(),
  );
  t.deepEqual(await commandOutcome(scope, entryOf(recorded('v6/greeter-run#1').sent('RunCommand'))), nothing());
  t.deepEqual(await commandOutcome(scope, { type: 0xfc01, payload: bytes('opaque') }), nothing());
});

test('an Input command from the SDK is refused', async (t) => {
  const ex = recorded('v6/greeter-run#1');
  const input: JournalEntry = { type: MessageType.InputCommand, payload: new Uint8Array() };
  await t.throwsAsync(
    commandOutcome(scopeOf(t.context, ex), input),
    rejection(ProtocolCode.protocolViolation, 'the SDK must not send an Input command'),
  );
});

test('the promise commands are the ones whose batch runs under the workflow promise queue', (t) => {
  t.deepEqual(
    [...PROMISE_COMMANDS].sort(),
    [MessageType.GetPromiseCommand, MessageType.PeekPromiseCommand, MessageType.CompletePromiseCommand].sort(),
  );
});

// --- State (commands/state.ts) -----------------------------------------------------------------

test('state writes: set, clear and clear-all become the batch state ops, keys as UTF-8', async (t) => {
  const add = recorded('v6/object-eager-state#1');
  const reset = recorded('v6/object-eager-state#4');
  const scope = scopeOf(t.context, reset);
  t.deepEqual((await commandOutcome(scope, entryOf(add.sent('SetStateCommand')))).state, [
    { op: 'set', key: 'count', value: bytes('1') },
  ]);
  t.deepEqual((await commandOutcome(scope, entryOf(reset.sent('ClearStateCommand')))).state, [
    { op: 'clear', key: 'count' },
  ]);
  t.deepEqual(await commandOutcome(scope, entryOf(reset.sent('ClearAllStateCommand'))), {
    ...nothing(),
    state: [{ op: 'clearAll' }],
  });
});

test('lazy state read: void for an unset key, the stored value once set, as restate-server answered', async (t) => {
  const first = recorded('v6/object-lazy-state#1');
  const out = await commandOutcome(scopeOf(t.context, first), entryOf(first.sent('GetLazyStateCommand')));
  t.deepEqual(
    out.notifications.map((n) => [n.type, hex(n.payload)]),
    [[MessageType.GetLazyStateCompletionNotification, hex(first.answered('GetLazyStateCompletionNotification'))]],
  );
  t.deepEqual(decodeNotification(out.notifications[0]!.payload), { completionId: 1, void: true });

  const second = recorded('v6/object-lazy-state#2');
  await storeState(t, second, [{ op: 'set', key: 'count', value: bytes('1') }]);
  const again = await commandOutcome(scopeOf(t.context, second), entryOf(second.sent('GetLazyStateCommand')));
  t.is(hex(again.notifications[0]!.payload), hex(second.answered('GetLazyStateCompletionNotification')));
  t.deepEqual(decodeNotification(again.notifications[0]!.payload), { completionId: 1, value: bytes('1') });
  t.deepEqual(again.state, [], 'a read writes nothing');
});

test('lazy state reads see the writes of earlier commands of their batch, in order', async (t) => {
  const ex = recorded('v6/object-lazy-state#2');
  await storeState(t, ex, [
    { op: 'set', key: 'count', value: bytes('1') },
    { op: 'set', key: 'other', value: bytes('x') },
  ]);
  const get = entryOf(ex.sent('GetLazyStateCommand'));
  const keys = entryOf(ex.sent('GetLazyStateKeysCommand'));
  const read = async (pendingState: StateOp[]) => {
    const scope = scopeOf(t.context, ex, { pendingState });
    const value = decodeNotification((await commandOutcome(scope, get)).notifications[0]!.payload);
    const names = decodeNotification((await commandOutcome(scope, keys)).notifications[0]!.payload).stateKeys ?? [];
    return {
      value: value.void ? 'void' : Buffer.from(value.value!).toString(),
      keys: names.map((k) => Buffer.from(k).toString()),
    };
  };
  t.deepEqual(await read([]), { value: '1', keys: ['count', 'other'] });
  t.deepEqual(await read([{ op: 'set', key: 'count', value: bytes('2') }]), { value: '2', keys: ['count', 'other'] });
  t.deepEqual(await read([{ op: 'clear', key: 'count' }]), { value: 'void', keys: ['other'] });
  t.deepEqual(await read([{ op: 'clearAll' }]), { value: 'void', keys: [] });
  t.deepEqual(
    await read([
      { op: 'clearAll' },
      { op: 'set', key: 'b', value: bytes('3') },
      { op: 'set', key: 'a', value: bytes('4') },
    ]),
    {
      value: 'void',
      keys: ['a', 'b'],
    },
  );
});

test('lazy state keys: the stored keys, sorted, as restate-server answered', async (t) => {
  const ex = recorded('v6/object-lazy-state#2');
  await storeState(t, ex, [{ op: 'set', key: 'count', value: bytes('1') }]);
  const out = await commandOutcome(scopeOf(t.context, ex), entryOf(ex.sent('GetLazyStateKeysCommand')));
  t.deepEqual(
    out.notifications.map((n) => [n.type, hex(n.payload)]),
    [[MessageType.GetLazyStateKeysCompletionNotification, hex(ex.answered('GetLazyStateKeysCompletionNotification'))]],
  );
});

test('scoped state is read under its scope: the same key of the unscoped object is another state', async (t) => {
  const ex = recorded('v6/object-lazy-state#2');
  await storeState(t, ex, [{ op: 'set', key: 'count', value: bytes('1') }]);
  await storeState(t, ex, [{ op: 'set', key: 'count', value: bytes('9') }], 's1');
  const unscoped = scopeOf(t.context, ex);
  const scoped = { ...unscoped, target: { ...unscoped.target, scope: 's1' } };
  const value = async (s: typeof unscoped) =>
    decodeNotification((await commandOutcome(s, entryOf(ex.sent('GetLazyStateCommand')))).notifications[0]!.payload)
      .value;
  t.deepEqual(await value(unscoped), bytes('1'));
  t.deepEqual(await value(scoped), bytes('9'));
});

test('a shared handler may read state but not write it; a plain service may do neither', async (t) => {
  const lazy = recorded('v6/object-lazy-state#1');
  const set = entryOf(lazy.sent('SetStateCommand'));
  const get = entryOf(lazy.sent('GetLazyStateCommand'));
  // Counter/get is the shared handler of the recorded deployment.
  const shared = scopeOf(t.context, { ...lazy, path: '/invoke/Counter/get' });
  t.is(shared.handlerTy, 'Shared');
  t.is((await commandOutcome(shared, get)).notifications.length, 1);
  await t.throwsAsync(
    commandOutcome(shared, set),
    rejection(ProtocolCode.protocolViolation, 'state writes are not allowed in a shared handler'),
  );
  const clearAll = entryOf(recorded('v6/object-eager-state#4').sent('ClearAllStateCommand'));
  await t.throwsAsync(
    commandOutcome(shared, clearAll),
    rejection(ProtocolCode.protocolViolation, 'state writes are not allowed in a shared handler'),
  );

  const service = scopeOf(t.context, { ...lazy, path: '/invoke/Greeter/greet' });
  for (const entry of [get, set, entryOf(lazy.sent('GetLazyStateKeysCommand'))]) {
    await t.throwsAsync(
      commandOutcome(service, entry),
      rejection(ProtocolCode.protocolViolation, 'state commands are not allowed in a plain service handler'),
    );
  }
});

// --- Calls and one-way sends (commands/calls.ts) -----------------------------------------------

const invokeBody = (out: CommandOutcome): Extract<OutboxBody, { kind: 'invoke' }> => {
  const body = out.outbox[0]!.body as OutboxBody;
  if (body.kind !== 'invoke') throw new Error(`not an invoke message: ${body.kind}`);
  return body;
};

test('call-and-send: a call names its callee at once and leaves one invoke message with caller and parent', async (t) => {
  const ex = recorded('v6/call-and-send#1');
  const scope = scopeOf(t.context, ex);
  const out = await commandOutcome(scope, entryOf(ex.sent('CallCommand', 0)));
  const body = invokeBody(out);
  t.deepEqual(
    out.outbox.map((m) => m.id),
    [`${ex.invocationId}:1:0`],
  );
  t.deepEqual(body, {
    kind: 'invoke',
    invocationId: body.invocationId,
    target: { service: 'Greeter', handler: 'greet', serviceTy: 'Service' },
    input: base64('"bob"'),
    headers: [],
    parent: {
      invocationId: ex.invocationId,
      target: { service: 'Caller', handler: 'callAndSend', serviceTy: 'Service' },
    },
    caller: { invocationId: ex.invocationId, completionId: 2 },
  });
  t.notThrows(() => parseInvocationId(body.invocationId));
  t.deepEqual(
    out.notifications.map((n) => [n.type, decodeNotification(n.payload)]),
    [[MessageType.CallInvocationIdCompletionNotification, { completionId: 1, invocationId: body.invocationId }]],
    'on the completion id restate-server answered (its id was random too)',
  );
  t.is(decodeNotification(ex.answered('CallInvocationIdCompletionNotification', 0)).completionId, 1);
  t.deepEqual([out.timersAdd, out.state, out.attachWaits], [[], [], []]);

  const twice = invokeBody(await commandOutcome(scope, entryOf(ex.sent('CallCommand', 0))));
  t.not(twice.invocationId, body.invocationId, 'a plain call names a new invocation each time');
});

test('call-and-send: a call to an object carries its key (which picks the partition) and its headers', async (t) => {
  const ex = recorded('v6/call-and-send#1');
  const body = invokeBody(await commandOutcome(scopeOf(t.context, ex), entryOf(ex.sent('CallCommand', 1))));
  t.deepEqual(body.target, { service: 'Counter', handler: 'add', serviceTy: 'VirtualObject', key: 'gk' });
  t.deepEqual(body.headers, [{ key: 'x-custom', value: 'v' }]);
  t.is(body.input, base64('5'));
  t.like(body, { caller: { invocationId: ex.invocationId, completionId: 6 } });
  t.is(parseInvocationId(body.invocationId).partitionKey, partitionKeyOf('gk'));
});

test('call-and-send: a one-way send has a parent and no caller; a delayed one executes at its invoke time', async (t) => {
  const ex = recorded('v6/call-and-send#1');
  const scope = scopeOf(t.context, ex);
  const now = await commandOutcome(scope, entryOf(ex.sent('OneWayCallCommand', 0)));
  const sent = invokeBody(now);
  t.is(sent.input, base64('"one-way"'));
  t.deepEqual(sent.parent, { invocationId: ex.invocationId, target: scope.target });
  t.false('caller' in sent);
  t.false('executeAt' in sent);
  t.deepEqual(decodeNotification(now.notifications[0]!.payload), { completionId: 3, invocationId: sent.invocationId });

  const delayed = invokeBody(await commandOutcome(scope, entryOf(ex.sent('OneWayCallCommand', 1))));
  t.is(delayed.executeAt, 1795311710640);
  t.is(delayed.input, base64('"delayed"'));
});

test('a send or call with an idempotency key names the one invocation of that key, whoever sends it', async (t) => {
  const ex = recorded('v6/call-and-send#1');
  const send = encodeOneWayCallCommand({
    serviceName: 'Greeter',
    handlerName: 'greet',
    parameter: bytes('"idem"'),
    headers: [],
    key: '',
    idempotencyKey: 'once',
    invokeTime: 0,
    invocationIdNotificationIdx: 7,
    name: '',
  });
  const expected = idempotentInvocationId('Greeter', undefined, 'greet', 'once');
  const fromCaller = invokeBody(
    await commandOutcome(scopeOf(t.context, ex), { type: MessageType.OneWayCallCommand, payload: send }),
  );
  t.is(fromCaller.invocationId, expected);
  t.is(fromCaller.idempotencyKey, 'once');
  const fromOther = invokeBody(
    await commandOutcome(scopeOf(t.context, recorded('v6/greeter-run#1')), {
      type: MessageType.OneWayCallCommand,
      payload: send,
    }),
  );
  t.is(fromOther.invocationId, expected);

  const call = encodeCallCommand({
    serviceName: 'Counter',
    handlerName: 'add',
    parameter: bytes('1'),
    headers: [],
    key: 'k9',
    idempotencyKey: 'once',
    invocationIdNotificationIdx: 8,
    resultCompletionId: 9,
    name: '',
  });
  const keyed = invokeBody(
    await commandOutcome(scopeOf(t.context, ex), { type: MessageType.CallCommand, payload: call }),
  );
  t.is(keyed.invocationId, idempotentInvocationId('Counter', 'k9', 'add', 'once'));
  t.is(parseInvocationId(keyed.invocationId).partitionKey, partitionKeyOf('k9'), 'in the key partition, with its lock');
});

test('a call to a workflow run names the workflow id run; its other handlers get new ids', async (t) => {
  const ex = recorded('v6/call-and-send#1');
  const call = (handlerName: string) =>
    encodeCallCommand({
      serviceName: 'Signup',
      handlerName,
      parameter: bytes('"a@b.c"'),
      headers: [],
      key: 'wf9',
      invocationIdNotificationIdx: 1,
      resultCompletionId: 2,
      name: '',
    });
  const run = invokeBody(
    await commandOutcome(scopeOf(t.context, ex), { type: MessageType.CallCommand, payload: call('run') }),
  );
  t.is(run.invocationId, workflowRunId('Signup', 'wf9'));
  t.deepEqual(run.target, { service: 'Signup', handler: 'run', serviceTy: 'Workflow', key: 'wf9' });
  const verify = invokeBody(
    await commandOutcome(scopeOf(t.context, ex), { type: MessageType.CallCommand, payload: call('verify') }),
  );
  t.not(verify.invocationId, run.invocationId);
  t.is(parseInvocationId(verify.invocationId).partitionKey, partitionKeyOf('wf9'));
});

test('a call to a service or handler the registry does not know is refused with 404', async (t) => {
  const ex = recorded('v6/call-and-send#1');
  const call = (serviceName: string, handlerName: string) => ({
    type: MessageType.CallCommand,
    payload: encodeCallCommand({
      serviceName,
      handlerName,
      parameter: new Uint8Array(),
      headers: [],
      key: '',
      invocationIdNotificationIdx: 1,
      resultCompletionId: 2,
      name: '',
    }),
  });
  await t.throwsAsync(
    commandOutcome(scopeOf(t.context, ex), call('Nope', 'greet')),
    rejection(404, "service 'Nope' or its handler 'greet' not found"),
  );
  await t.throwsAsync(
    commandOutcome(scopeOf(t.context, ex), call('Greeter', 'nope')),
    rejection(404, "service 'Greeter' or its handler 'nope' not found"),
  );
});

// --- Signals (commands/signals.ts) -------------------------------------------------------------

const signalBody = (out: CommandOutcome): Extract<OutboxBody, { kind: 'signal' }> => {
  const body = out.outbox[0]!.body as OutboxBody;
  if (body.kind !== 'signal') throw new Error(`not a signal message: ${body.kind}`);
  return body;
};

test('awakeable: completing it signals the waiting invocation by the index its id carries (17)', async (t) => {
  const waiter = recorded('v6/awakeable#1');
  const resolver = recorded('v6/awakeable#2');
  const out = await commandOutcome(scopeOf(t.context, resolver), entryOf(resolver.sent('CompleteAwakeableCommand')));
  t.deepEqual(out, {
    ...nothing(),
    outbox: [
      {
        id: `${resolver.invocationId}:1:0`,
        body: { kind: 'signal', invocationId: waiter.invocationId, signalId: 17, value: base64('"hello"') },
      },
    ],
  });
});

test('awakeable: rejecting it signals a failure; an id of a pre-v5 journal (prom_) is refused', async (t) => {
  const resolver = recorded('v6/awakeable#2');
  const scope = scopeOf(t.context, resolver);
  const id = 'sign_1Ky_kG4S6D_i6jcSCnYCJgmiNVBYxamGrAAAAEQ'; // v6/awakeable: the waiter's signal 17
  const reject = encodeCompleteAwakeableCommand({ awakeableId: id, failure: { code: 500, message: 'nope' }, name: '' });
  t.deepEqual(
    signalBody(await commandOutcome(scope, { type: MessageType.CompleteAwakeableCommand, payload: reject })),
    {
      kind: 'signal',
      invocationId: recorded('v6/awakeable#1').invocationId,
      signalId: 17,
      failure: { code: 500, message: 'nope' },
    },
  );
  const legacy = encodeCompleteAwakeableCommand({
    awakeableId: id.replace('sign_', 'prom_'),
    value: bytes('1'),
    name: '',
  });
  await t.throwsAsync(
    commandOutcome(scope, { type: MessageType.CompleteAwakeableCommand, payload: legacy }),
    rejection(501, 'awakeables of pre-v5 journals are not supported'),
  );
});

test('SendSignal by index (CANCEL) and by name, with a value, a failure or nothing', async (t) => {
  const ex = recorded('v6/greeter-run#1');
  const target = invocationIdToString(newInvocationId(partitionKeyOf('anywhere')));
  const send = async (c: {
    idx?: number;
    name?: string;
    void?: true;
    value?: Uint8Array;
    failure?: { code: number; message: string };
  }) =>
    signalBody(
      await commandOutcome(scopeOf(t.context, ex), {
        type: MessageType.SendSignalCommand,
        payload: encodeSendSignalCommand({ targetInvocationId: target, entryName: '', ...c }),
      }),
    );
  t.deepEqual(await send({ idx: 1, void: true }), { kind: 'signal', invocationId: target, signalId: 1 });
  t.deepEqual(await send({ name: 'approved', value: bytes('"yes"') }), {
    kind: 'signal',
    invocationId: target,
    signalName: 'approved',
    value: base64('"yes"'),
  });
  t.deepEqual(await send({ name: 'approved', failure: { code: 409, message: 'no' } }), {
    kind: 'signal',
    invocationId: target,
    signalName: 'approved',
    failure: { code: 409, message: 'no' },
  });
  t.deepEqual(
    await send({ idx: 17, value: new Uint8Array() }),
    { kind: 'signal', invocationId: target, signalId: 17, value: '' },
    'an empty value is a value',
  );
});

// --- Attach and get-output (commands/attach.ts) ------------------------------------------------

const completedId = recorded('v6/greeter-run#1').invocationId;
const failedId = recorded('v6/terminal-error#1').invocationId;
const pendingId = recorded('v6/sleep-suspend-resume#1').invocationId;
const missingId = recorded('v6/retry-after-delay#1').invocationId;
const outcomes: Record<string, TargetOutcome> = {
  [completedId]: { state: 'completed', completion: { ok: base64('"hi alice"') } },
  [failedId]: {
    state: 'completed',
    completion: { failure: { code: 400, message: 'bad input', metadata: [{ key: 'k', value: 'v' }] } },
  },
  [pendingId]: { state: 'pending' },
};

function attachEntry(type: number, c: Partial<AttachInvocationCommand>): JournalEntry {
  const full = { resultCompletionId: 5, name: '', ...c };
  return {
    type,
    payload:
      type === MessageType.AttachInvocationCommand
        ? encodeAttachInvocationCommand(full)
        : encodeGetInvocationOutputCommand(full),
  };
}

async function answer(t: T, type: number, c: Partial<AttachInvocationCommand>) {
  const out = await commandOutcome(
    scopeOf(t.context, recorded('v6/call-and-send#1'), { outcomes }),
    attachEntry(type, c),
  );
  return { out, notes: out.notifications.map((n) => [n.type, decodeNotification(n.payload)]) };
}

test('get-output: the output of a completed target, void while it runs, not-found otherwise, at once', async (t) => {
  const type = MessageType.GetInvocationOutputCommand;
  const note = MessageType.GetInvocationOutputCompletionNotification;
  t.deepEqual((await answer(t, type, { invocationId: completedId })).notes, [
    [note, { completionId: 5, value: bytes('"hi alice"') }],
  ]);
  t.deepEqual((await answer(t, type, { invocationId: failedId })).notes, [
    [note, { completionId: 5, failure: { code: 400, message: 'bad input', metadata: [{ key: 'k', value: 'v' }] } }],
  ]);
  t.deepEqual((await answer(t, type, { invocationId: pendingId })).notes, [[note, { completionId: 5, void: true }]]);
  t.deepEqual((await answer(t, type, { invocationId: missingId })).notes, [
    [note, { completionId: 5, failure: { code: 404, message: 'not found' } }],
  ]);
  t.deepEqual((await answer(t, type, { invocationId: pendingId })).out.attachWaits, [], 'get-output never waits');
});

test('attach: a completed target answers at once; any other waits for it after the commit', async (t) => {
  const type = MessageType.AttachInvocationCommand;
  t.deepEqual((await answer(t, type, { invocationId: completedId })).notes, [
    [MessageType.AttachInvocationCompletionNotification, { completionId: 5, value: bytes('"hi alice"') }],
  ]);
  const pending = await answer(t, type, { invocationId: pendingId });
  t.deepEqual(pending.notes, []);
  t.deepEqual(pending.out.attachWaits, [{ completionId: 5, targetId: pendingId }]);
  // A target not known yet may still be an undelivered callee: services/attachments.ts answers
  // not-found after the commit if it never appears.
  t.deepEqual((await answer(t, type, { invocationId: missingId })).out.attachWaits, [
    { completionId: 5, targetId: missingId },
  ]);
});

test('attach and get-output: a bad id fails with 400; workflow and idempotent-request targets with 501', async (t) => {
  for (const [type, note] of [
    [MessageType.AttachInvocationCommand, MessageType.AttachInvocationCompletionNotification],
    [MessageType.GetInvocationOutputCommand, MessageType.GetInvocationOutputCompletionNotification],
  ] as const) {
    const bad = await answer(t, type, { invocationId: 'inv_nope' });
    t.is(bad.notes.length, 1);
    t.is(bad.notes[0]![0], note);
    t.like(bad.notes[0]![1], { completionId: 5, failure: { code: 400 } });
    t.regex((bad.notes[0]![1] as { failure: { message: string } }).failure.message, /^bad invocation id 'inv_nope': /);

    const unsupported = {
      code: 501,
      message: 'attaching to workflow or idempotent-request targets is not supported yet',
    };
    const wf = await answer(t, type, { workflowTarget: { workflowName: 'Signup', workflowKey: 'wf1' } });
    t.deepEqual(wf.notes, [[note, { completionId: 5, failure: unsupported }]]);
    const idem = await answer(t, type, {
      idempotentRequestTarget: { serviceName: 'Greeter', handlerName: 'greet', idempotencyKey: 'once' },
    });
    t.deepEqual(idem.notes, [[note, { completionId: 5, failure: unsupported }]]);
  }
});
