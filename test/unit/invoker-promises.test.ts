/**
 * Durable promises of workflows (invoker/commands/promises.ts, promise-records.ts): the
 * workflow-promise exchange of SDK 1.17.2 and restate-server 1.7.12 (test/fixtures/protocol-vectors/)
 * replayed against a real embedded store. The run waits on `verified`; `verify`, another
 * invocation of the same workflow id, peeks it and completes it.
 */
import type { ExecutionContext } from 'ava';
import { ProtocolCode } from '../../src/errors.js';
import { RecordKind, type PromiseRecord } from '../../src/model/persisted.js';
import { storedService } from '../../src/model/state-owner.js';
import { decodeNotification, encodeCompletePromiseCommand, MessageType } from '../../src/protocol/messages.js';
import {
  CommandRejected,
  commandOutcome,
  type CommandOutcome,
  type CommandScope,
} from '../../src/runtime/invoker/commands/index.js';
import { PromiseChanges, PromiseQueues } from '../../src/runtime/invoker/commands/promise-records.js';
import type { JournalEntry } from '../../src/store/types.js';
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

const run = recorded('v6/workflow-promise#1');
const verify = recorded('v6/workflow-promise#2');
/** Where the record of `verified` of Signup/wf1 lives: its key is (stored service, workflow id, name). */
const verifiedKey = JSON.stringify(['Signup', 'wf1', 'verified']);

/**
 * One batch of an exchange's promise commands, as an attempt reads it: under the workflow id's
 * promise changes, written back in the batch's commit (here, at once).
 */
async function batch(t: T, ex: Recorded, entries: JournalEntry[]): Promise<CommandOutcome[]> {
  const scope = scopeOf(t.context, ex);
  const promises = new PromiseChanges(t.context.store, scope.partition, storedService(scope.target), scope.target.key!);
  const outs: CommandOutcome[] = [];
  for (const entry of entries) outs.push(await commandOutcome({ ...scope, promises }, entry));
  await t.context.store.commit({ partition: scope.partition, records: promises.writes() });
  return outs;
}

const record = async (t: T) =>
  (await t.context.store.getRecord(scopeOf(t.context, run).partition, RecordKind.promise, verifiedKey)) as
    PromiseRecord | undefined;
const notes = (out: CommandOutcome) => out.notifications.map((n) => [n.type, decodeNotification(n.payload)]);

test('the recorded exchanges are one workflow id, in one partition', (t) => {
  t.is(run.key, 'wf1');
  t.is(verify.key, 'wf1');
  t.is(run.path, '/invoke/Signup/run');
  t.is(verify.path, '/invoke/Signup/verify');
});

test('get on a promise not completed yet answers nothing and stores the waiter', async (t) => {
  const [out] = await batch(t, run, [entryOf(run.sent('GetPromiseCommand'))]);
  t.deepEqual(out, { notifications: [], timersAdd: [], outbox: [], state: [], attachWaits: [] });
  t.deepEqual(await record(t), { waiters: [{ invocationId: run.invocationId, completionId: 1 }] });
});

test('verify: peek answers void, complete answers void and sends the value to the waiting run, as restate-server did', async (t) => {
  await batch(t, run, [entryOf(run.sent('GetPromiseCommand'))]);
  const [peek, complete] = await batch(t, verify, [
    entryOf(verify.sent('PeekPromiseCommand')),
    entryOf(verify.sent('CompletePromiseCommand')),
  ]);

  t.deepEqual(
    peek!.notifications.map((n) => [n.type, hex(n.payload)]),
    [[MessageType.PeekPromiseCompletionNotification, hex(verify.answered('PeekPromiseCompletionNotification'))]],
  );
  t.deepEqual(
    complete!.notifications.map((n) => [n.type, hex(n.payload)]),
    [
      [
        MessageType.CompletePromiseCompletionNotification,
        hex(verify.answered('CompletePromiseCompletionNotification')),
      ],
    ],
  );
  t.deepEqual(complete!.outbox, [
    {
      id: `${verify.invocationId}:1:0`,
      body: {
        kind: 'complete',
        notificationType: MessageType.GetPromiseCompletionNotification,
        invocationId: run.invocationId,
        completionId: 1,
        value: base64('"yes"'),
      },
    },
  ]);
  t.deepEqual(await record(t), { waiters: [], result: { value: base64('"yes"') } });
});

test('a second completion fails with 409 and changes nothing; get and peek then answer the first value at once', async (t) => {
  await batch(t, verify, [entryOf(verify.sent('CompletePromiseCommand'))]);
  const again = encodeCompletePromiseCommand({
    key: 'verified',
    completionValue: bytes('"no"'),
    resultCompletionId: 4,
    name: '',
  });
  const [second] = await batch(t, verify, [{ type: MessageType.CompletePromiseCommand, payload: again }]);
  // restate-server's ALREADY_COMPLETED_INVOCATION_ERROR
  t.deepEqual(notes(second!), [
    [
      MessageType.CompletePromiseCompletionNotification,
      { completionId: 4, failure: { code: 409, message: 'promise was already completed' } },
    ],
  ]);
  t.deepEqual(second!.outbox, []);
  t.deepEqual(await record(t), { waiters: [], result: { value: base64('"yes"') } });

  const [get] = await batch(t, run, [entryOf(run.sent('GetPromiseCommand'))]);
  t.deepEqual(notes(get!), [
    [MessageType.GetPromiseCompletionNotification, { completionId: 1, value: bytes('"yes"') }],
  ]);
  t.deepEqual(await record(t), { waiters: [], result: { value: base64('"yes"') } }, 'an answered get is not a waiter');
  const [peek] = await batch(t, verify, [entryOf(verify.sent('PeekPromiseCommand'))]);
  t.deepEqual(notes(peek!), [
    [MessageType.PeekPromiseCompletionNotification, { completionId: 1, value: bytes('"yes"') }],
  ]);
});

test('a promise completed with a failure passes the failure on to every waiter', async (t) => {
  await batch(t, run, [entryOf(run.sent('GetPromiseCommand'))]);
  const other = { ...run, invocationId: verify.invocationId };
  await batch(t, other, [entryOf(run.sent('GetPromiseCommand'))]);
  const reject = encodeCompletePromiseCommand({
    key: 'verified',
    completionFailure: { code: 400, message: 'not verified' },
    resultCompletionId: 2,
    name: '',
  });
  const [out] = await batch(t, verify, [{ type: MessageType.CompletePromiseCommand, payload: reject }]);
  t.deepEqual(
    out!.outbox.map((m) => m.body),
    [run.invocationId, verify.invocationId].map((invocationId) => ({
      kind: 'complete',
      notificationType: MessageType.GetPromiseCompletionNotification,
      invocationId,
      completionId: 1,
      failure: { code: 400, message: 'not verified' },
    })),
  );
  const [peek] = await batch(t, verify, [entryOf(verify.sent('PeekPromiseCommand'))]);
  t.deepEqual(notes(peek!), [
    [
      MessageType.PeekPromiseCompletionNotification,
      { completionId: 1, failure: { code: 400, message: 'not verified' } },
    ],
  ]);
});

test('promises are per workflow id: another id does not see the completion', async (t) => {
  await batch(t, verify, [entryOf(verify.sent('CompletePromiseCommand'))]);
  const elsewhere = { ...verify, key: 'wf2' };
  const [peek] = await batch(t, elsewhere, [entryOf(verify.sent('PeekPromiseCommand'))]);
  t.deepEqual(notes(peek!), [[MessageType.PeekPromiseCompletionNotification, { completionId: 1, void: true }]]);
});

test('promise commands outside a workflow, or without the batch promise changes, are refused', async (t) => {
  const get = entryOf(run.sent('GetPromiseCommand'));
  const refused = {
    instanceOf: CommandRejected,
    code: ProtocolCode.protocolViolation,
    message: 'promise commands are only allowed in workflow handlers',
  };
  const object: CommandScope = scopeOf(t.context, { ...run, path: '/invoke/Counter/add' });
  await t.throwsAsync(commandOutcome(object, get), refused);
  await t.throwsAsync(commandOutcome(scopeOf(t.context, run), get), refused);
});

test('PromiseQueues runs the jobs of one workflow id one at a time, in order; other ids do not wait', async (t) => {
  const queues = new PromiseQueues();
  const log: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = queues.run('Signup', 'wf1', async () => {
    log.push('wf1 first start');
    await held;
    log.push('wf1 first end');
  });
  const second = queues.run('Signup', 'wf1', () => Promise.resolve(void log.push('wf1 second')));
  await queues.run('Signup', 'wf2', () => Promise.resolve(void log.push('wf2')));
  t.deepEqual(log, ['wf1 first start', 'wf2']);
  release();
  await Promise.all([first, second]);
  t.deepEqual(log, ['wf1 first start', 'wf2', 'wf1 first end', 'wf1 second']);
});
