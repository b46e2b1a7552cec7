/**
 * A small, fixed world for the `/query` unit tests: an in-memory store implementing the read
 * methods the query code uses, a registry with one deployment (Greeter, Counter, Signup), and
 * invocations in every machine state, with journals and object state. Served through the real
 * admin app on a loopback port.
 */
import anyTest, { type TestFn } from 'ava';
import { tableFromIPC, type Table } from 'apache-arrow';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InvocationContext } from '../../machines/invocation.js';
import { createAdminApp } from '../../src/admin/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { invocationIdToString, parseInvocationId, partitionKeyOf } from '../../src/protocol/ids.js';
import {
  encodeCallCommand,
  encodeGetPromiseCommand,
  encodeInputCommand,
  encodeNotification,
  encodeOutputCommand,
  encodeRunCommand,
  encodeSetStateCommand,
  encodeSleepCommand,
  MessageType,
} from '../../src/protocol/messages.js';
import { QueryEngine } from '../../src/query/engine.js';
import { Registry } from '../../src/registry/registry.js';
import { registryDefaults, type Deployment, type ServiceMeta, type ServiceType } from '../../src/registry/types.js';
import { partitionOf } from '../../src/model/partitioning.js';
import type { HistoryEntry, JournalEntry, Store } from '../../src/store/types.js';

export const PARTITIONS = 4;
export const DEPLOYMENT_ID = 'dp_15mkDZVNLJ7axAH3QeEdtQt';
export const T0 = Date.UTC(2026, 10, 22, 1, 40, 53, 537);

const enc = new TextEncoder();

function service(
  name: string,
  ty: ServiceType,
  handlers: Array<[string, 'Exclusive' | 'Shared' | 'Workflow' | undefined]>,
): ServiceMeta {
  return {
    name,
    ty,
    handlers: handlers.map(([h, hty]) => ({
      name: h,
      ...(hty ? { ty: hty } : {}),
      public: true,
      input: { required: false },
      output: { setContentTypeIfEmpty: false },
    })),
    deploymentId: DEPLOYMENT_ID,
    revision: 2,
    public: true,
    idempotencyRetention: registryDefaults.retention,
    journalRetention: registryDefaults.retention,
    ...(ty === 'Workflow' ? { workflowCompletionRetention: registryDefaults.retention } : {}),
    inactivityTimeout: registryDefaults.inactivityTimeout,
    abortTimeout: registryDefaults.abortTimeout,
    enableLazyState: false,
    retryPolicy: registryDefaults.retryPolicy,
  };
}

export const deployment: Deployment = {
  id: DEPLOYMENT_ID,
  uri: 'http://localhost:9080/',
  protocolType: 'BidiStream',
  httpVersion: 'HTTP/2.0',
  createdAt: T0 - 20_000,
  minProtocolVersion: 5,
  maxProtocolVersion: 7,
  sdkVersion: 'restate-sdk-typescript/1.17.2',
  services: [
    service('Greeter', 'Service', [
      ['greet', undefined],
      ['sleepy', undefined],
      ['flaky', undefined],
    ]),
    service('Counter', 'VirtualObject', [
      ['add', 'Exclusive'],
      ['get', 'Shared'],
    ]),
    service('Signup', 'Workflow', [
      ['run', 'Workflow'],
      ['verify', 'Shared'],
    ]),
  ],
};

/** A fixed invocation id: the key's partition key (or a made-up one) and a uuid from `n`. */
export function invocationId(n: number, key?: string): string {
  const uuid = new Uint8Array(16);
  uuid[15] = n;
  return invocationIdToString({
    partitionKey: key !== undefined ? partitionKeyOf(key) : BigInt(n) * 1_000_000_000_000_000_000n,
    uuid,
  });
}

export const ids = {
  greetDone: invocationId(1),
  sleepyRunning: invocationId(2),
  counterSuspended: invocationId(3, 'k1'),
  counterPending: invocationId(4, 'k1'),
  flakyBackingOff: invocationId(5),
  greetScheduled: invocationId(6),
  signupFailed: invocationId(7, 'w1'),
  calledByService: invocationId(8),
};

const retryPolicy = registryDefaults.retryPolicy;
const base = (id: string, target: InvocationContext['target'], createdAt: number): InvocationContext => ({
  id,
  target,
  invokedBy: 'ingress',
  retryPolicy,
  createdAt,
  modifiedAt: createdAt,
  retryCount: 0,
  // As the runtime stores it for the default retentions (services/admission.ts).
  completionRetention: 86_400_000,
});

const snapshots: Array<{ value: string; context: InvocationContext }> = [
  {
    value: 'completed',
    context: {
      ...base(ids.greetDone, { service: 'Greeter', handler: 'greet', serviceTy: 'Service' }, T0),
      idempotencyKey: '01M80EKMN1P0TFBG4VPZ5QNXJS',
      modifiedAt: T0 + 18,
      runningAt: T0,
      completedAt: T0 + 18,
      deploymentId: DEPLOYMENT_ID,
      completion: { ok: Buffer.from('"hi d3"').toString('base64') },
    },
  },
  {
    value: 'running',
    context: {
      ...base(ids.sleepyRunning, { service: 'Greeter', handler: 'sleepy', serviceTy: 'Service' }, T0 + 1000),
      idempotencyKey: '01M80ENNQ748273EASCQKG9Z29',
      runningAt: T0 + 1000,
      deploymentId: DEPLOYMENT_ID,
    },
  },
  {
    value: 'suspended',
    context: {
      ...base(
        ids.counterSuspended,
        { service: 'Counter', handler: 'add', key: 'k1', serviceTy: 'VirtualObject' },
        T0 + 2000,
      ),
      exclusive: true,
      lockHeld: true,
      modifiedAt: T0 + 2100,
      runningAt: T0 + 2000,
      deploymentId: DEPLOYMENT_ID,
      awaiting: { completions: [1], signals: [1], namedSignals: [] },
    },
  },
  {
    value: 'pending',
    context: {
      ...base(
        ids.counterPending,
        { service: 'Counter', handler: 'add', key: 'k1', serviceTy: 'VirtualObject' },
        T0 + 3000,
      ),
      exclusive: true,
    },
  },
  {
    value: 'backingOff',
    context: {
      ...base(ids.flakyBackingOff, { service: 'Greeter', handler: 'flaky', serviceTy: 'Service' }, T0 + 4000),
      runningAt: T0 + 4000,
      modifiedAt: T0 + 4500,
      retryCount: 2,
      nextRetryAt: T0 + 5500,
      deploymentId: DEPLOYMENT_ID,
      lastFailure: {
        code: 500,
        message: 'flaky failure attempt 2',
        stacktrace: 'Error: flaky failure attempt 2\n    at flaky (svc.mjs:26:32)',
        errorCode: 'RT0007',
        relatedCommandIndex: 1,
        relatedCommandName: 'step',
        relatedCommandType: MessageType.RunCommand,
        at: T0 + 4500,
      },
    },
  },
  {
    value: 'scheduled',
    context: {
      ...base(ids.greetScheduled, { service: 'Greeter', handler: 'greet', serviceTy: 'Service' }, T0 + 5000),
      scheduledStartAt: T0 + 3_600_000,
    },
  },
  {
    value: 'completed',
    context: {
      ...base(ids.signupFailed, { service: 'Signup', handler: 'run', key: 'w1', serviceTy: 'Workflow' }, T0 + 6000),
      runningAt: T0 + 6000,
      completedAt: T0 + 6004,
      modifiedAt: T0 + 6004,
      deploymentId: DEPLOYMENT_ID,
      completion: { failure: { code: 409, message: 'Cancelled' } },
    },
  },
  {
    value: 'completed',
    context: {
      ...base(ids.calledByService, { service: 'Greeter', handler: 'greet', serviceTy: 'Service' }, T0 + 7000),
      invokedBy: 'service',
      caller: { invocationId: ids.sleepyRunning, completionId: 2 },
      runningAt: T0 + 7000,
      completedAt: T0 + 7001,
      modifiedAt: T0 + 7001,
      deploymentId: DEPLOYMENT_ID,
      completion: { ok: '' },
    },
  },
];

const entry = (type: number, payload: Uint8Array): JournalEntry => ({ type, payload });
const input = (json: string) =>
  entry(
    MessageType.InputCommand,
    encodeInputCommand({
      headers: [{ key: 'content-type', value: 'application/json' }],
      value: enc.encode(json),
      name: '',
    }),
  );

export const journals: Record<string, JournalEntry[]> = {
  [ids.greetDone]: [
    input('"d3"'),
    entry(MessageType.OutputCommand, encodeOutputCommand({ value: enc.encode('"hi d3"'), name: '' })),
  ],
  [ids.sleepyRunning]: [
    input('5000'),
    entry(MessageType.RunCommand, encodeRunCommand({ resultCompletionId: 1, name: 'step-a' })),
    entry(MessageType.RunCompletionNotification, encodeNotification({ completionId: 1, value: enc.encode('5') })),
    entry(
      MessageType.CallCommand,
      encodeCallCommand({
        serviceName: 'Greeter',
        handlerName: 'greet',
        parameter: enc.encode('"x"'),
        headers: [],
        key: '',
        invocationIdNotificationIdx: 2,
        resultCompletionId: 3,
        name: '',
      }),
    ),
    entry(
      MessageType.CallInvocationIdCompletionNotification,
      encodeNotification({ completionId: 2, invocationId: ids.calledByService }),
    ),
    entry(MessageType.SleepCommand, encodeSleepCommand({ wakeUpTime: T0 + 6000, resultCompletionId: 4, name: '' })),
  ],
  [ids.counterSuspended]: [
    input('1'),
    entry(
      MessageType.SetStateCommand,
      encodeSetStateCommand({ key: enc.encode('count'), value: enc.encode('10'), name: '' }),
    ),
    entry(MessageType.GetPromiseCommand, encodeGetPromiseCommand({ key: 'verified', resultCompletionId: 1, name: '' })),
  ],
  [ids.flakyBackingOff]: [
    input('{}'),
    entry(MessageType.RunCommand, encodeRunCommand({ resultCompletionId: 1, name: 'step' })),
  ],
};

export const objectState: Record<string, Map<string, Uint8Array>> = {
  [JSON.stringify(['Counter', 'k1'])]: new Map([
    ['count', enc.encode('10')],
    ['blob', new Uint8Array([0xff, 0x00])],
  ]),
};

/** The machine history of the completed greet (store `readHistory`). */
export const greetHistory: HistoryEntry[] = [
  { from: null, event: 'xstate.init', to: 'running', at: T0, attempt: 0 },
  { from: 'running', event: 'pinDeployment', to: 'running', at: T0 + 2, attempt: 0 },
  { from: 'running', event: 'complete', to: 'completed', at: T0 + 18, attempt: 0 },
];

/** Store reads, counted so tests can see what a query touched. */
export interface FakeStore extends Store {
  reads: { loadInvocation: number; readJournal: string[]; readState: number };
}

export function fakeStore(): FakeStore {
  const byPartition = new Map<number, string[]>();
  for (const s of snapshots) {
    // As the runtime does: an invocation lives in the partition of its id's partition key.
    const p = partitionOf(parseInvocationId(s.context.id).partitionKey, PARTITIONS);
    byPartition.set(p, [...(byPartition.get(p) ?? []), s.context.id].sort());
  }
  const reads = { loadInvocation: 0, readJournal: [] as string[], readState: 0 };
  const store: Partial<FakeStore> = {
    reads,
    info: { backend: 'embedded', location: 'memory', warnings: [] },
    listInvocations: async (p) => byPartition.get(p) ?? [],
    loadInvocation: async (p, id) => {
      reads.loadInvocation++;
      if (!byPartition.get(p)?.includes(id)) return undefined;
      return structuredClone(snapshots.find((s) => s.context.id === id));
    },
    readJournal: async (_p, id, from = 0) => {
      reads.readJournal.push(id);
      return (journals[id] ?? []).slice(from);
    },
    journalLength: async (_p, id) => (journals[id] ?? []).length,
    readState: async (_p, service, key) => {
      reads.readState++;
      return new Map(objectState[JSON.stringify([service, key])] ?? []);
    },
    readHistory: async (_p, id) => (id === ids.greetDone ? greetHistory : []),
    listRecords: async () => [],
    getRecord: async () => undefined,
    loadRegistry: async () => ({ version: 1, deployments: [deployment] }),
  };
  return store as FakeStore;
}

export const config: Config = {
  ...loadConfig({}, []),
  ingressPort: 0,
  adminPort: 0,
  host: '127.0.0.1',
  dataDir: '/nonexistent',
  partitions: PARTITIONS,
};

export interface QueryServer {
  url: string;
  store: FakeStore;
  engine: QueryEngine;
  /** POST /v4/query with `accept`; the raw response. */
  query(sql: string, accept?: string): Promise<Response>;
  /** The JSON rows of a query that must succeed. */
  rows(sql: string): Promise<Rows>;
  /** The Arrow table of a query that must succeed and answer in Arrow IPC. */
  arrow(sql: string, accept?: string): Promise<Table>;
  close(): Promise<void>;
}

/** An ava `test` whose tests share one query server, started before and closed after them. */
export function queryServerTest(): TestFn<QueryServer> {
  const test = anyTest as TestFn<QueryServer>;
  test.before(async (t) => {
    t.context = await startQueryServer();
  });
  test.after.always(async (t) => {
    await t.context.close();
  });
  return test;
}

export type Rows = Array<Record<string, unknown>>;

export async function startQueryServer(): Promise<QueryServer> {
  const store = fakeStore();
  const registry = await Registry.load(store);
  const engine = new QueryEngine();
  await engine.warmUp();
  const app = createAdminApp({ registry, config, query: { store, registry, config, engine } });
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const query = (sql: string, accept = 'application/json') =>
    fetch(`${url}/v4/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query: sql }),
    });
  return {
    url,
    store,
    engine,
    query,
    async rows(sql) {
      const res = await query(sql);
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${res.status} ${body}`);
      return (JSON.parse(body) as { rows: Rows }).rows;
    },
    async arrow(sql, accept = '*/*') {
      const res = await query(sql, accept);
      if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
      if (res.headers.get('content-type') !== 'application/vnd.apache.arrow.stream')
        throw new Error(`not arrow: ${res.headers.get('content-type')}`);
      return tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await engine.close();
    },
  };
}
