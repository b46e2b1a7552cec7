/**
 * Pure parts of the admin operations: the admin OpenAPI document's operations against the
 * table of reference-behavior.md §3.1, the state version of §3.4, the journal prefix of
 * restart-as-new (§3.5), and the state request's serde texts.
 */
import test from 'ava';
import { adminOpenApi } from '../../src/admin/openapi.js';
import { decodeModifyServiceState } from '../../src/admin/routes/service-state.js';
import { parseJsonTree } from '../../src/http/serde-json.js';
import { AdminTextError } from '../../src/admin/errors.js';
import {
  encodeCallCommand,
  encodeInputCommand,
  encodeNotification,
  encodeOutputCommand,
  encodeRunCommand,
  encodeSetStateCommand,
  MessageType,
} from '../../src/protocol/messages.js';
import { restartPrefix } from '../../src/runtime/services/operator.js';
import { stateVersion } from '../../src/runtime/services/state-mutations.js';
import type { JournalEntry } from '../../src/store/types.js';

/** §3.1, every method, path and operationId of the reference's document. */
const REFERENCE = `
GET /cluster-health cluster_health
GET /deployments list_deployments
POST /deployments create_deployment
GET /deployments/{deployment} get_deployment
DELETE /deployments/{deployment} delete_deployment
PATCH /deployments/{deployment} update_deployment
GET /health health
DELETE /invocations/{invocation_id} delete_invocation
PATCH /invocations/{invocation_id}/cancel cancel_invocation
PATCH /invocations/{invocation_id}/kill kill_invocation
PATCH /invocations/{invocation_id}/pause pause_invocation
PATCH /invocations/{invocation_id}/purge purge_invocation
PATCH /invocations/{invocation_id}/purge-journal purge_journal
PATCH /invocations/{invocation_id}/restart-as-new restart_as_new_invocation
PATCH /invocations/{invocation_id}/resume resume_invocation
GET /kafka-clusters list_kafka_clusters
POST /kafka-clusters create_kafka_cluster
GET /kafka-clusters/{cluster_name} get_kafka_cluster
DELETE /kafka-clusters/{cluster_name} delete_kafka_cluster
PATCH /kafka-clusters/{cluster_name} update_kafka_cluster
PUT /limits/rules upsert_rules
POST /limits/rules/bulk-delete bulk_delete_rules
POST /query query
GET /services list_services
GET /services/{service} get_service
PATCH /services/{service} modify_service
GET /services/{service}/handlers list_service_handlers
GET /services/{service}/handlers/{handler} get_service_handler
GET /services/{service}/openapi get_service_openapi
POST /services/{service}/state modify_service_state
GET /subscriptions list_subscriptions
POST /subscriptions create_subscription
GET /subscriptions/{subscription} get_subscription
DELETE /subscriptions/{subscription} delete_subscription
GET /version version
POST /vqueues/{vqueue_id}/pause pause_vqueue
POST /vqueues/{vqueue_id}/resume resume_vqueue
`
  .trim()
  .split('\n')
  .sort();

test('the admin OpenAPI document has exactly the reference operations', (t) => {
  const doc = adminOpenApi() as {
    openapi: string;
    info: { version: string };
    paths: Record<
      string,
      Record<string, { operationId: string; parameters?: Array<{ name: string; in: string }>; deprecated?: boolean }>
    >;
  };
  t.is(doc.openapi, '3.1.0');
  t.is(doc.info.version, '1.7.12');
  const ops = Object.entries(doc.paths).flatMap(([p, methods]) =>
    Object.entries(methods).map(([m, op]) => `${m.toUpperCase()} ${p} ${op.operationId}`),
  );
  t.deepEqual(ops.sort(), REFERENCE);
  const restart = doc.paths['/invocations/{invocation_id}/restart-as-new']!['patch']!;
  t.deepEqual(
    restart.parameters?.map((p) => `${p.in}:${p.name}`),
    ['path:invocation_id', 'query:from', 'query:deployment'],
  );
  t.true(doc.paths['/invocations/{invocation_id}']!['delete']!.deprecated);
  t.notThrows(() => JSON.stringify(doc));
});

test('state versions as the reference and the CLI compute them (§3.4, cli-admin-requests.txt)', (t) => {
  const enc = (s: string) => Buffer.from(s);
  t.is(stateVersion(new Map()), '47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU');
  t.is(stateVersion(new Map([['count', enc('1')]])), 'c5BzwkDXJZKb3faKSDXzDBnHKylbEnJsnt0tSeeSKps');
  t.is(stateVersion(new Map([['count', enc('x')]])), '4UNkbVRuNqgSJEGdvg8XGArqLC0Gp9O5n4VIgivCFdc');
  // Entries are hashed sorted by key, whatever the map's order.
  const ab = stateVersion(
    new Map([
      ['a', enc('1')],
      ['b', enc('2')],
    ]),
  );
  t.is(
    stateVersion(
      new Map([
        ['b', enc('2')],
        ['a', enc('1')],
      ]),
    ),
    ab,
  );
});

const entry = (type: number, payload: Uint8Array): JournalEntry => ({ type, payload });
const input = entry(MessageType.InputCommand, encodeInputCommand({ headers: [], value: Buffer.from('{}'), name: '' }));
const run = (id: number) => entry(MessageType.RunCommand, encodeRunCommand({ resultCompletionId: id, name: `r${id}` }));
const runDone = (id: number) =>
  entry(
    MessageType.RunCompletionNotification,
    encodeNotification({ completionId: id, value: Buffer.from(String(id)) }),
  );
const set = entry(
  MessageType.SetStateCommand,
  encodeSetStateCommand({ key: Buffer.from('k'), value: Buffer.from('v'), name: '' }),
);
const output = entry(MessageType.OutputCommand, encodeOutputCommand({ value: Buffer.from('"ok"'), name: '' }));

test('restart-as-new keeps a journal prefix with the completions of its commands', (t) => {
  // Two runs proposed together: both commands, then both completions.
  const journal = [input, run(1), run(2), runDone(1), runDone(2), set, output];
  t.deepEqual(restartPrefix(journal, 1), [input, run(1), runDone(1)]);
  t.deepEqual(restartPrefix(journal, 2), [input, run(1), run(2), runDone(1), runDone(2)]);
  t.deepEqual(restartPrefix(journal, 3), [input, run(1), run(2), runDone(1), runDone(2)]);
  t.deepEqual(restartPrefix(journal, 5), [input, run(1), run(2), runDone(1), runDone(2), set]);
  t.is(restartPrefix(journal, 6), undefined, 'the Output command');
  t.is(restartPrefix(journal, 99), undefined, 'past the end');
  t.is(restartPrefix([input, run(1)], 1), undefined, 'a command never completed');
  const call = entry(
    MessageType.CallCommand,
    encodeCallCommand({
      serviceName: 'S',
      handlerName: 'h',
      parameter: new Uint8Array(),
      headers: [],
      key: '',
      invocationIdNotificationIdx: 1,
      resultCompletionId: 2,
      name: '',
    }),
  );
  const callId = entry(
    MessageType.CallInvocationIdCompletionNotification,
    encodeNotification({ completionId: 1, invocationId: 'inv_x' }),
  );
  const callDone = entry(
    MessageType.CallCompletionNotification,
    encodeNotification({ completionId: 2, value: new Uint8Array() }),
  );
  t.deepEqual(restartPrefix([input, call, callId, callDone], 1), [input, call, callId, callDone]);
  t.is(restartPrefix([input, call, callId], 1), undefined, 'the call result is missing');
});

test('ModifyServiceStateRequest: values are byte arrays or strings; serde texts', (t) => {
  const decode = (text: string) => decodeModifyServiceState(parseJsonTree(Buffer.from(text)));
  const ok = decode('{"object_key":"k9","new_state":{"count":[52,50],"s":"x"},"version":"v","extra":1}');
  t.is(ok.objectKey, 'k9');
  t.is(ok.version, 'v');
  t.deepEqual(
    [...ok.newState].map(([k, v]) => [k, Buffer.from(v).toString()]),
    [
      ['count', '42'],
      ['s', 'x'],
    ],
  );
  const fails = (text: string, message: string) => {
    const err = t.throws(() => decode(text), { instanceOf: AdminTextError });
    t.is(err?.message, `Failed to deserialize the JSON body into the target type: ${message}`);
  };
  fails('{"new_state":{"count":[49]}}', 'missing field `object_key` at line 1 column 28');
  fails('{"object_key":"k"}', 'missing field `new_state` at line 1 column 18');
  fails(
    '{"object_key":5,"new_state":{}}',
    'object_key: invalid type: integer `5`, expected a string at line 1 column 15',
  );
  fails(
    '{"object_key":"k","new_state":{"a":[300]}}',
    'new_state.a[0]: invalid value: integer `300`, expected u8 at line 1 column 39',
  );
});
